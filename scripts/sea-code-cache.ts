/**
 * Makes the V8 code cache of the executable's app bundle (`app.cjs` -> `app.cache`). Run by
 * scripts/build-sea.ts with the same Node binary the executable is built from (a cache made by
 * another V8 is rejected). The bundle is compiled exactly as bin/sea-app.ts compiles it and
 * evaluated, so the functions its start-up runs are in the cache too. Run it under V8's
 * `--predictable` (build-sea.ts does): otherwise concurrent compilation and GC timing make
 * different bytes on every run.
 * Usage: node --predictable scripts/sea-code-cache.ts <app.cjs> <app.cache>
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import process from "node:process";
import vm from "node:vm";
import { SHARED_KEY, SHARED_MODULES, wrapApp } from "../bin/sea-app.ts";

const [input, output] = process.argv.slice(2);
if (!input || !output) throw new Error("usage: node scripts/sea-code-cache.ts <app.cjs> <app.cache>");
(globalThis as Record<symbol, unknown>)[Symbol.for(SHARED_KEY)] = SHARED_MODULES;
const script = new vm.Script(wrapApp(readFileSync(input, "utf8")), { filename: "agentcli:app.cjs" });
const mod = { exports: {} as Record<string, unknown> };
(script.runInThisContext() as (...args: unknown[]) => void)(
  mod.exports,
  createRequire(input),
  mod,
  input,
  dirname(input),
);
const cache = script.createCachedData();
writeFileSync(output, cache);
console.log(
  `code cache: ${(cache.length / 1024 / 1024).toFixed(1)} MB for ${Object.keys(mod.exports).length} commands`,
);
process.exit(0);
