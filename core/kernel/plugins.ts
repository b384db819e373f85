/**
 * Builds the plugin driver: the built-in plugins (the static list the entry passes in:
 * `plugins/registry.ts`, or a custom executable's), then third-party plugin files the user
 * names (`--plugin <path>`, `AGENTCLI_PLUGINS`), all validated alike.
 *
 * A plugin file is an ES module whose default export is a plugin or an array of plugins
 * (or a named export `plugins`).
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { existsSync } from "node:fs";
import { agentcliError } from "./errors.ts";
import { PluginFileMissing, PluginLoadFailed, PluginNoDefaultExport, PluginPathEmpty } from "./errors-data.ts";
import { PluginDriver } from "./plugin-driver.ts";
import { validatePlugins } from "./plugin-validate.ts";
import type { Plugin } from "./hooks.ts";
import { loadTypeScriptAsEsm } from "./runtime.ts";

/** Loads the built-in plus third-party plugins and returns the driver. */
export async function loadPlugins(
  builtins: readonly Plugin[],
  opts: { paths?: readonly string[]; cwd?: string } = {},
): Promise<PluginDriver> {
  const cwd = opts.cwd ?? ".";
  const raw: unknown[] = [...builtins];
  const sources: string[] = builtins.map((p) => `built-in plugin "${p.name}"`);
  for (const p of opts.paths ?? []) {
    if (!p) {
      throw agentcliError(PluginPathEmpty);
    }
    const file = isAbsolute(p) ? p : resolve(cwd, p);
    if (!existsSync(file)) {
      throw agentcliError(PluginFileMissing, { path: p });
    }
    if (file.endsWith(".ts")) await loadTypeScriptAsEsm();
    let mod: Record<string, unknown>;
    try {
      mod = await import(pathToFileURL(file).href);
    } catch (err) {
      throw agentcliError(PluginLoadFailed, { path: p, reason: err instanceof Error ? err.message : String(err) });
    }
    const exported = mod.default ?? mod.plugins;
    if (exported === undefined) {
      throw agentcliError(PluginNoDefaultExport, { path: p });
    }
    for (const plugin of Array.isArray(exported) ? exported : [exported]) {
      raw.push(plugin);
      sources.push(p);
    }
  }
  return new PluginDriver(validatePlugins(raw, sources));
}
