/**
 * Entry of the single executable: installs the loader for embedded assets (PGlite's WASM,
 * the chat UI), then runs the CLI.
 */
import { setAssetLoader } from "../core/kernel/runtime.ts";
import { createRequire } from "node:module";

const require = createRequire(__filename);
const sea = require("node:sea") as { isSea(): boolean; getAsset(name: string): ArrayBuffer };

/** The variables startTuned set for the process it started in place. */
const TUNED = "AGENTCLI_MEMORY_TUNED_EXE";

/**
 * bin/agentcli.js's start in place (`execTunedServer`) for the executable: `dev` and `serve`
 * start again in place with `MALLOC_ARENA_MAX=2` and `MALLOC_MMAP_THRESHOLD_=131072`, each
 * unless set already (`AGENTCLI_MEMORY_TUNING=0`: never); once started they are removed from
 * the environment, so the server's children get the user's. Not V8's young-generation flag:
 * through NODE_OPTIONS it makes V8 refuse the executable's code cache (~350 ms more start).
 */
function startTuned(): boolean {
  const env = process.env;
  const saved = env[TUNED];
  if (saved !== undefined) {
    delete env[TUNED];
    for (const name of saved.split(",")) if (name) delete env[name];
    return false;
  }
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (typeof execve !== "function" || env.AGENTCLI_MEMORY_TUNING === "0" || process.platform !== "linux") return false;
  const argv = process.argv.slice(2);
  const command = argv.find((a, i) => !a.startsWith("-") && argv[i - 1] !== "--plugin");
  if (command !== "dev" && command !== "serve") return false;
  const next: NodeJS.ProcessEnv = { ...env };
  const set: string[] = [];
  for (const [name, value] of [["MALLOC_ARENA_MAX", "2"], ["MALLOC_MMAP_THRESHOLD_", "131072"]] as const) {
    if (next[name] === undefined) (next[name] = value), set.push(name);
  }
  if (set.length === 0) return false;
  next[TUNED] = set.join(",");
  // An executable's argv is [itself, ...arguments]; Node shows it as [itself, itself, ...].
  execve.call(process, process.execPath, [process.execPath, ...argv], next);
  return true;
}

if (sea.isSea() && startTuned()) {
  // Unreachable: the process image was replaced.
} else if (sea.isSea()) {
  setAssetLoader((name) => {
    try {
      return new Uint8Array(sea.getAsset(name));
    } catch {
      return null;
    }
  });
}
void import("./main.ts");
