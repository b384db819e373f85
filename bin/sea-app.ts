/**
 * The executable's second stage. The SEA main holds only argv parsing, help and version, so
 * `agentcli --version` starts as fast as Node itself; the commands (server, harness, control
 * plane) are a separate CommonJS bundle embedded as the asset `app.cjs`, compiled on first use
 * with the V8 code cache made at build time (`app.cache`). Modules both stages need (errors,
 * runtime, version) are shared through `globalThis`, so `instanceof AgentcliError` and the
 * asset loader hold across the two bundles.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import process from "node:process";
import vm from "node:vm";
import * as errors from "../core/kernel/errors.ts";
import * as runtime from "../core/kernel/runtime.ts";
import * as version from "../core/kernel/version.ts";

/** Where the app bundle finds the main stage's copy of the shared modules. */
export const SHARED_KEY = "agentcli.shared";
export const SHARED_MODULES = { errors, runtime, version };

/** The wrapper both the build (for the code cache) and the executable compile: keep them equal. */
export function wrapApp(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
}

let app: Record<string, unknown> | null = null;

/** `import()` of a `--plugin` file from the app bundle uses Node's main loader; its experimental notice is noise to users. */
function quietLoaderWarning(): void {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : (warning as Error | undefined)?.message ?? "";
    if (text.includes("USE_MAIN_CONTEXT_DEFAULT_LOADER")) return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}

/** Evaluates the embedded app bundle once and returns its exports (one namespace per command). */
export function loadApp(): Record<string, unknown> {
  if (app) return app;
  const source = runtime.embeddedAsset("app.cjs");
  if (!source) throw new Error("this executable has no embedded app.cjs: rebuild it with npm run build");
  (globalThis as Record<symbol, unknown>)[Symbol.for(SHARED_KEY)] = SHARED_MODULES;
  quietLoaderWarning();
  const cache = runtime.embeddedAsset("app.cache");
  const script = new vm.Script(wrapApp(new TextDecoder().decode(source)), {
    filename: "agentcli:app.cjs",
    cachedData: cache ? Buffer.from(cache.buffer, cache.byteOffset, cache.byteLength) : undefined,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (process.env.AGENTCLI_DEBUG_CODE_CACHE) {
    process.stderr.write(
      `app.cjs code cache ${cache ? (script.cachedDataRejected ? "rejected" : "used") : "absent"}\n`,
    );
  }
  const mod = { exports: {} as Record<string, unknown> };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn(mod.exports, createRequire(process.execPath), mod, process.execPath, dirname(process.execPath));
  app = mod.exports;
  return app;
}
