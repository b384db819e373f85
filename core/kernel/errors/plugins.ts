/**
 * The error catalogue: Plugins (PLUGIN_INVALID). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** `--plugin ""` or an empty entry of AGENTCLI_PLUGINS. */
export const PluginPathEmpty = {
  name: "PluginPathEmpty",
  code: "PLUGIN_INVALID",
  title: "A plugin path is empty.",
  message: "Cannot load plugin: empty path",
  hint: "Pass a file: --plugin ./my-plugin.js",
} as const satisfies ErrorData;

/** A plugin path that names no file. */
export const PluginFileMissing = {
  name: "PluginFileMissing",
  code: "PLUGIN_INVALID",
  title: "A plugin path names no file.",
  message: (v: { path: string }) => `Cannot load plugin "${v.path}": no such file`,
  hint: "Check the path given to --plugin or AGENTCLI_PLUGINS.",
} as const satisfies ErrorData;

/** A plugin file that does not load as a module (a syntax error, a missing import). */
export const PluginLoadFailed = {
  name: "PluginLoadFailed",
  code: "PLUGIN_INVALID",
  title: "A plugin file does not load as an ES module.",
  message: (v: { path: string; reason: string }) => `Cannot load plugin "${v.path}": ${v.reason}`,
  hint:
    "A plugin file is an ES module whose default export is a plugin (see docs/plugins.md, section The plugin object).",
} as const satisfies ErrorData;

/** A plugin module without a default export. */
export const PluginNoDefaultExport = {
  name: "PluginNoDefaultExport",
  code: "PLUGIN_INVALID",
  title: "A plugin module has no default export.",
  message: (v: { path: string }) => `Cannot load plugin "${v.path}": it has no default export`,
  hint: "Export the plugin: export default definePlugin({ ... }).",
} as const satisfies ErrorData;

/** Plugins that do not register: each problem (a bad shape, a provider declared twice) is listed as a diagnostic. */
export const PluginsInvalid = {
  name: "PluginsInvalid",
  code: "PLUGIN_INVALID",
  title: "Plugins do not register: each problem is listed with its plugin's file.",
  message: (v: { count: number }) => `Cannot register plugins: ${v.count} problem${v.count > 1 ? "s" : ""}`,
  hint: "Fix each problem above (docs/plugins.md describes a plugin's shape), or leave that plugin out.",
} as const satisfies ErrorData;

/** A plugin's hook threw (HTTP 500: the body names nothing, the server logs this message). */
export const PluginHookFailed = {
  name: "PluginHookFailed",
  code: "PLUGIN_FAILED",
  title: "A plugin's hook failed while it ran.",
  message: (v: { hook: string; plugin: string; reason: string }) =>
    `Cannot run hook "${v.hook}" of plugin "${v.plugin}": ${v.reason}`,
  hint: (v: { plugin: string }) =>
    `This is a failure inside the plugin "${v.plugin}"; check its configuration or report it to its author.`,
} as const satisfies ErrorData;

/** `sandboxProviderConformance` of `agentcli/testing` without a sandbox plugin or a provider name. */
export const ConformanceNoProvider = {
  name: "ConformanceNoProvider",
  code: "PLUGIN_INVALID",
  title: "The sandbox conformance suite is given neither a sandbox plugin nor a provider name.",
  message: "sandboxProviderConformance: pass a sandbox plugin, or the provider name of a built-in one",
  hint: 'Call it with { plugin } (a plugin of kind "sandbox") or { provider: "<a built-in provider>" }.',
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const PLUGINS_ERRORS: readonly ErrorData[] = [
  PluginPathEmpty,
  PluginFileMissing,
  PluginLoadFailed,
  PluginNoDefaultExport,
  PluginsInvalid,
  PluginHookFailed,
  ConformanceNoProvider,
];
