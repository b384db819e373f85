/**
 * Benchmark (issue 33, item 5): multi-step runs side by side with the peer. `agentcli dev`
 * (`--graph steps=bench/graph-steps.ts`) and `langgraph-cli dev` (the same graph from its
 * langgraph.json) run one after the other against one model server (bench/model.ts `--steps`)
 * that calls the tool `step` `--steps` times per run, then answers. At each number of clients
 * (`--clients`), each client runs `threads.create` + `runs.wait` on new threads, `--runs` runs
 * per client, and checks each run's output (every step's tool call and result, then the answer).
 * Per server and number of clients: the server's CPU per step and per run (its process tree's
 * user + system time over the load, /proc), runs/s, and p50/p99 of a run.
 *
 *   npm run bench:steps -- [--clients 1,32] [--runs 4] [--steps 10] [--workers <n>|default] [--only ours|peer] [--json]
 *
 * Not part of the test suite.
 */
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { pct, ROOT, startModel } from "./children.ts";
import { measured, ours, peer, type Running, startSide } from "./side-by-side.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const list = (s: string) => s.split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
const CLIENTS = list(arg("--clients") ?? "1,32");
const RUNS_PER_CLIENT = Number(arg("--runs") ?? 4) || 4;
const STEPS = Number(arg("--steps") ?? 10) || 10;
const ONLY = arg("--only");
/**
 * Runs each server executes at once: by default the largest load's (agentcli's default is 4 per
 * CPU, the peer's 10), so every run of it runs at once; `--workers default` leaves each its own.
 */
const WORKERS = arg("--workers") === "default" ? undefined : Number(arg("--workers") ?? Math.max(...CLIENTS));
const graphs = { steps: join(ROOT, "bench/graph-steps.ts") };

/** One run on a new thread; its duration (ms). Checks the run took every step: user, (call, result) x steps, answer. */
async function oneRun(server: Running): Promise<number> {
  const start = performance.now();
  const thread = await server.client.threads.create();
  const out = await server.client.runs.wait(thread.thread_id, server.assistantId, {
    input: { messages: [{ role: "user", content: "work" }] },
  }) as { messages?: unknown[]; __error__?: unknown };
  if (!out || out.__error__ || out.messages?.length !== 2 + 2 * STEPS) {
    throw new Error(`unexpected run output: ${JSON.stringify(out).slice(0, 300)}`);
  }
  return performance.now() - start;
}

async function level(server: Running, clients: number) {
  const total = clients * RUNS_PER_CLIENT;
  const lat: number[] = [];
  const t0 = performance.now();
  const m = await measured(server.proc, () =>
    Promise.all(Array.from({ length: clients }, async () => {
      for (let k = 0; k < RUNS_PER_CLIENT; k++) lat.push(await oneRun(server));
    })));
  return {
    runs: total,
    runsPerSecond: (total / (performance.now() - t0)) * 1000,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    cpuMsPerStep: m.cpuMs / (total * STEPS),
    cpuMsPerRun: m.cpuMs / total,
    peakRssMb: m.peakRssMb,
  };
}

type Level = Awaited<ReturnType<typeof level>>;

const model = await startModel({ steps: STEPS });
const env = { ...process.env, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "bench", NO_COLOR: "1" };
const results: Record<string, Record<number, Level>> = {};
try {
  for (const side of [ours, peer]) {
    if (ONLY && (ONLY === "ours") !== (side === ours)) continue;
    process.stderr.write(`measuring ${side.name}...\n`);
    const server = await startSide(side, env, { graphs, graphId: "steps", workers: WORKERS });
    try {
      for (let i = 0; i < 2; i++) await oneRun(server); // warm-up: graph loaded, connections open
      results[side.name] = {};
      for (const c of CLIENTS) {
        process.stderr.write(`  ${c} clients, ${c * RUNS_PER_CLIENT} runs of ${STEPS} steps...\n`);
        results[side.name]![c] = await level(server, c);
      }
    } finally {
      await server.stop();
    }
  }
} finally {
  model.proc.kill("SIGTERM");
}

const rows: Array<[string, (l: Level) => number, "lower" | "higher", string]> = [
  ["server CPU per step", (l) => l.cpuMsPerStep, "lower", "ms"],
  ["server CPU per run", (l) => l.cpuMsPerRun, "lower", "ms"],
  ["runs/s", (l) => l.runsPerSecond, "higher", ""],
  ["run p50", (l) => l.p50, "lower", "ms"],
  ["run p99", (l) => l.p99, "lower", "ms"],
  ["peak RSS (process tree)", (l) => l.peakRssMb, "lower", "MB"],
];
const a = results[ours.name], b = results[peer.name];
/** Ours against the peer's: above 1, ours is better. */
const ratio = (c: number, get: (l: Level) => number, better: "lower" | "higher") => {
  if (!a?.[c] || !b?.[c]) return null;
  return better === "lower" ? get(b[c]!) / get(a[c]!) : get(a[c]!) / get(b[c]!);
};
const loadAvg = loadavg().map((l) => Number(l.toFixed(1)));
if (args.includes("--json")) {
  const ratios = Object.fromEntries(
    CLIENTS.map((c) => [c, Object.fromEntries(rows.map(([label, get, better]) => [label, ratio(c, get, better)]))]),
  );
  const meta = { date: new Date().toISOString(), cpus: cpus().length, loadavg: loadAvg, node: process.versions.node };
  console.log(
    JSON.stringify(
      { ...meta, steps: STEPS, runsPerClient: RUNS_PER_CLIENT, workers: WORKERS ?? "default", results, ratios },
      null,
      2,
    ),
  );
} else {
  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  console.log(
    `${new Date().toISOString().slice(0, 10)}, ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, load average ${
      loadAvg.join(" ")
    }, Node ${process.versions.node}, runs of ${STEPS} tool-calling steps, ${RUNS_PER_CLIENT} per client, workers: ${
      WORKERS ?? "each server's default"
    }`,
  );
  console.log(`| clients | metric | ${ours.name} | ${peer.name} | ratio |\n|---:|---|---:|---:|---:|`);
  for (const c of CLIENTS) {
    for (const [label, get, better, unit] of rows) {
      const cell = (l: Level | undefined) => (l ? `${f(get(l))}${unit ? ` ${unit}` : ""}` : "-");
      const r = ratio(c, get, better);
      console.log(`| ${c} | ${label} | ${cell(a?.[c])} | ${cell(b?.[c])} | ${r === null ? "-" : `${r.toFixed(1)}x`} |`);
    }
  }
}
