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
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import { ROOT, runLoad, startAgentcliDev, startModel, stopTree, treeStats, waitOk } from "./children.ts";
import { streamRun } from "./side-by-side.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS = Number(arg("--runs") ?? 300);
const CLIENTS = Number(arg("--clients") ?? 32);
const TOP = Number(arg("--top") ?? 40);
const profDir = arg("--keep") ?? mkdtempSync(join(tmpdir(), "agentcli-prof-"));
const TOKENS = Number(arg("--tokens") ?? 0);
const TOKEN_INTERVAL = Number(arg("--token-interval-ms") ?? 2);

/** The load's start and end on the profiles' clock: only samples taken in between are counted (not start-up, warm-up or shutdown). */
const windowUs: [bigint, bigint] = [0n, 0n];
const model = await startModel(TOKENS ? { tokens: TOKENS, tokenIntervalMs: TOKEN_INTERVAL } : 0);
const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-"));
const port = await freePort("127.0.0.1");
const env = {
  ...process.env,
  OPENAI_BASE_URL: model.url,
  OPENAI_API_KEY: "bench",
  NO_COLOR: "1",
  ...(args.includes("--no-prof") ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` }),
};
const proc = startAgentcliDev(port, dir, env, ["--graph", `bench=${join(ROOT, "bench/graph.ts")}`]);
const url = `http://127.0.0.1:${port}`;
try {
  await waitOk(url, performance.now(), proc);
  const client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0, maxConcurrency: Infinity } });
  const [a] = await client.assistants.search({ graphId: "bench", limit: 1 });
  const server = { client, assistantId: a!.assistant_id };
  const load = async (clients: number, total: number) => {
    if (!TOKENS) return runLoad(client, a!.assistant_id, clients, total);
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
  const c0 = treeStats(proc.pid!).cpuMs;
  const t0 = performance.now();
  windowUs[0] = process.hrtime.bigint() / 1000n; // the profiles' clock (monotonic, microseconds)
  const r = await load(CLIENTS, RUNS);
  windowUs[1] = process.hrtime.bigint() / 1000n;
  const c1 = treeStats(proc.pid!).cpuMs;
  console.log(
    `${RUNS} runs at ${CLIENTS} clients: ${(RUNS / (performance.now() - t0) * 1000).toFixed(1)} runs/s, p50 ${
      r.p50.toFixed(1)
    } ms, p99 ${r.p99.toFixed(1)} ms, server CPU ${((c1 - c0) / RUNS).toFixed(2)} ms/run`,
  );
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
      `${((v / total) * 100).toFixed(1).padStart(5)}%  ${(v / 1000 / RUNS).toFixed(3).padStart(6)} ms/run  ${k}`,
    );
  }
  console.log("\nfunctions:");
  for (const [k, v] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, TOP)) {
    console.log(
      `${((v / total) * 100).toFixed(1).padStart(5)}%  ${(v / 1000 / RUNS).toFixed(3).padStart(6)} ms/run  ${k}`,
    );
  }
}
console.log(`\nprofiles in ${profDir}`);
