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
import { userError } from "./errors.ts";
import { PluginDriver } from "./plugin-driver.ts";
import { validatePlugins } from "./plugin-validate.ts";
import type { Plugin } from "./hooks.ts";
import { loadTypeScriptAsEsm } from "./runtime.ts";

/** Loads the built-in plus third-party plugins and returns the driver. */
export async function loadPlugins(builtins: readonly Plugin[], opts: { paths?: readonly string[]; cwd?: string } = {}): Promise<PluginDriver> {
  const cwd = opts.cwd ?? ".";
  const raw: unknown[] = [...builtins];
  const sources: string[] = builtins.map((p) => `built-in plugin "${p.name}"`);
  for (const p of opts.paths ?? []) {
    if (!p) {
      throw userError("PLUGIN_INVALID", { message: `Cannot load plugin: empty path`, hint: `Pass a file: --plugin ./my-plugin.js` });
    }
    const file = isAbsolute(p) ? p : resolve(cwd, p);
    if (!existsSync(file)) {
      throw userError("PLUGIN_INVALID", { message: `Cannot load plugin "${p}": no such file`, hint: `Check the path given to --plugin or AGENTCLI_PLUGINS.` });
    }
    if (file.endsWith(".ts")) await loadTypeScriptAsEsm();
    let mod: Record<string, unknown>;
    try {
      mod = await import(pathToFileURL(file).href);
    } catch (err) {
      throw userError("PLUGIN_INVALID", {
        message: `Cannot load plugin "${p}": ${err instanceof Error ? err.message : String(err)}`,
        hint: "A plugin file is an ES module whose default export is a plugin (see docs/plugins.md, section The plugin object).",
      });
    }
    const exported = mod.default ?? mod.plugins;
    if (exported === undefined) {
      throw userError("PLUGIN_INVALID", { message: `Cannot load plugin "${p}": it has no default export`, hint: "Export the plugin: export default definePlugin({ ... })." });
    }
    for (const plugin of Array.isArray(exported) ? exported : [exported]) {
      raw.push(plugin);
      sources.push(p);
    }
  }
  return new PluginDriver(validatePlugins(raw, sources));
}
