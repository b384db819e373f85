/**
 * Profiles `agentcli dev` under the bench's load: starts it with `--cpu-prof` on a new
 * project serving bench/graph.ts, runs `threads.create` + `runs.wait` (warm-up, then N runs
 * at C clients), stops it, and prints the self time by package / file from the profile, of
 * the samples taken during the N runs only.
 *
 * With `--tokens <n>`, the load is instead bench/tokens.ts's: runs streamed in messages-tuple mode,
 * the model streaming n tokens per run, one every `--token-interval-ms` (default 2), `--clients`
 * at once, `--runs` in all (the figures per run are then per run of n tokens).
 *
 *   node bench/profile.ts [--runs 300] [--clients 32] [--top 40] [--keep DIR]
 *   node bench/profile.ts --tokens 1000 --runs 50 --clients 50 [--token-interval-ms 2]
 *
 * With `--idle <s>`, there is no load after the warm-up: the server's process tree is watched for
 * s seconds and the figures are per second (per process and thread from /proc, then the profile).
 *
 *   node bench/profile.ts --idle 30
 *
 * With `--steps <n>`, the load is bench/steps.ts's: bench/graph-steps.ts, the model calling the
 * tool n times per run, `--clients` workers (figures per run of n steps).
 *
 *   node bench/profile.ts --steps 10 --clients 32 --runs 128
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import { ROOT, runLoad, sleep, startAgentcliDev, startModel, stopTree, treeStats, waitOk } from "./children.ts";
import { streamRun } from "./side-by-side.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS = Number(arg("--runs") ?? 300);
const CLIENTS = Number(arg("--clients") ?? 32);
const TOP = Number(arg("--top") ?? 40);
const profDir = arg("--keep") ?? mkdtempSync(join(tmpdir(), "agentcli-prof-"));
const TOKENS = Number(arg("--tokens") ?? 0);
const TOKEN_INTERVAL = Number(arg("--token-interval-ms") ?? 2);
const IDLE = Number(arg("--idle") ?? 0);
const STEPS = Number(arg("--steps") ?? 0);
/** What the figures are divided by: runs under load, seconds when idle. */
const PER = IDLE || RUNS;

/** The load's start and end on the profiles' clock: only samples taken in between are counted (not start-up, warm-up or shutdown). */
const windowUs: [bigint, bigint] = [0n, 0n];
const model = await startModel(
  TOKENS ? { tokens: TOKENS, tokenIntervalMs: TOKEN_INTERVAL } : STEPS ? { steps: STEPS } : 0,
);
const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-"));
const port = await freePort("127.0.0.1");
const env = {
  ...process.env,
  OPENAI_BASE_URL: model.url,
  OPENAI_API_KEY: "bench",
  NO_COLOR: "1",
  ...(STEPS ? { AGENTCLI_MAX_CONNECTIONS_PER_CLIENT: "0", AGENTCLI_WORKERS: String(CLIENTS) } : {}),
  ...(args.includes("--no-prof")
    ? {}
    : { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${profDir}`.trim() }),
};
const proc = startAgentcliDev(port, dir, env, [
  "--graph",
  STEPS ? `steps=${join(ROOT, "bench/graph-steps.ts")}` : `bench=${join(ROOT, "bench/graph.ts")}`,
]);
const url = `http://127.0.0.1:${port}`;
try {
  await waitOk(url, performance.now(), proc);
  const client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0, maxConcurrency: Infinity } });
  const [a] = await client.assistants.search({ graphId: STEPS ? "steps" : "bench", limit: 1 });
  const server = { client, assistantId: a!.assistant_id };
  const load = async (clients: number, total: number) => {
    if (!TOKENS) return runLoad(client, a!.assistant_id, clients, total, STEPS ? 2 + 2 * STEPS : 2);
    const lat: number[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: clients }, async () => {
      while (next++ < total) {
        const s = performance.now();
        await streamRun(server, `profile ${next}`, TOKENS);
        lat.push(performance.now() - s);
      }
    }));
    lat.sort((x, y) => x - y);
    return { p50: lat[Math.floor(lat.length / 2)]!, p99: lat[Math.floor(lat.length * 0.99)]! };
  };
  await load(1, TOKENS ? 2 : 10);
  // Idle: past the collection the server makes when it goes quiet (core/engine/queue/idle-gc.ts).
  if (IDLE) await sleep(3000);
  const c0 = treeStats(proc.pid!).cpuMs;
  const t0 = performance.now();
  windowUs[0] = process.hrtime.bigint() / 1000n; // the profiles' clock (monotonic, microseconds)
  const before = threadCpu(proc.pid!);
  if (IDLE) await sleep(IDLE * 1000);
  const r = IDLE ? { p50: 0, p99: 0 } : await load(CLIENTS, RUNS);
  windowUs[1] = process.hrtime.bigint() / 1000n;
  const after = threadCpu(proc.pid!);
  const c1 = treeStats(proc.pid!).cpuMs;
  if (IDLE) {
    const { rssMb } = treeStats(proc.pid!);
    console.log(`idle ${IDLE} s: server tree CPU ${((c1 - c0) / IDLE).toFixed(2)} ms/s, RSS ${rssMb.toFixed(0)} MB`);
  }
  for (const [k, v] of after) {
    const d = (v - (before.get(k) ?? 0)) / PER;
    if (d > 0) console.log(`  ${d.toFixed(2).padStart(8)} ms/${IDLE ? "s" : "run"}  ${k}`);
  }
  if (!IDLE) {
    console.log(
      `${RUNS} runs at ${CLIENTS} clients: ${(RUNS / (performance.now() - t0) * 1000).toFixed(1)} runs/s, p50 ${
        r.p50.toFixed(1)
      } ms, p99 ${r.p99.toFixed(1)} ms, server CPU ${((c1 - c0) / RUNS).toFixed(2)} ms/run`,
    );
  }
} finally {
  await stopTree(proc, 10_000);
  model.proc.kill("SIGTERM");
}

// Self time per bucket (a package under node_modules, a file of ours, or a V8/Node category).
for (const f of readdirSync(profDir).filter((f) => f.endsWith(".cpuprofile"))) {
  const prof = JSON.parse(readFileSync(join(profDir, f), "utf8")) as {
    nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  let at = BigInt(prof.startTime);
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const buckets = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  prof.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const dt = prof.timeDeltas[i] ?? 0;
    at += BigInt(dt);
    if (at < windowUs[0] || at > windowUs[1]) return;
    total += dt;
    const u = n.callFrame.url;
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
    const bucket = m
      ? m[1]!
      : u.startsWith("file://")
      ? u.replace(`file://${ROOT}`, "")
      : u
      ? u.replace(/^node:/, "node:")
      : `(${n.callFrame.functionName || "anonymous"})`;
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + dt);
    const fn = `${n.callFrame.functionName || "(anon)"} ${
      u.replace(/.*node_modules\//, "").replace(`file://${ROOT}`, "")
    }:${n.callFrame.lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + dt);
  });
  console.log(`\n${f}: ${(total / 1000).toFixed(0)} ms sampled`);
  for (const [k, v] of [...buckets].sort((x, y) => y[1] - x[1]).slice(0, TOP)) {
    console.log(
      `${((v / total) * 100).toFixed(1).padStart(5)}%  ${(v / 1000 / PER).toFixed(3).padStart(6)} ms/${
        IDLE ? "s" : "run"
      }  ${k}`,
    );
  }
  console.log("\nfunctions:");
  for (const [k, v] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, TOP)) {
    console.log(
      `${((v / total) * 100).toFixed(1).padStart(5)}%  ${(v / 1000 / PER).toFixed(3).padStart(6)} ms/${
        IDLE ? "s" : "run"
      }  ${k}`,
    );
  }
}
console.log(`\nprofiles in ${profDir}`);

/** CPU ms per thread of the tree under `root` ("pid comm / tid thread-name"), from /proc. */
function threadCpu(root: number): Map<string, number> {
  const out = new Map<string, number>();
  const kids = new Map<number, number[]>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(d)]);
    } catch { /* gone */ }
  }
  const walk = (pid: number) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(1, 4).join(" ").slice(-60);
      for (const t of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out.set(`${pid} ${cmd} / ${t} ${name} user`, Number(f[11]) * 10);
        out.set(`${pid} ${cmd} / ${t} ${name} system`, Number(f[12]) * 10);
      }
    } catch { /* gone */ }
    for (const c of kids.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}
