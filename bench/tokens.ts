/**
 * Benchmark (issue 33, item 4): token streaming side by side with the peer. `agentcli dev`
 * (`--graph bench=bench/graph.ts`) and `langgraph-cli dev` (the same graph from its
 * langgraph.json) run one after the other against one model server (bench/model.ts
 * `--tokens`) that streams every reply as `--tokens` tokens, one every `--token-interval-ms`,
 * and records when each token left it. For each concurrency (`--concurrency`), that many SDK
 * clients each stream one run on a new thread in `messages-tuple` mode. Per server and
 * concurrency:
 * - CPU ms per 1,000 tokens: the server's process tree (user + system, /proc) over the load,
 *   divided by the tokens streamed;
 * - added delay p50/p99: for every token, the client's receive time of its event less the
 *   model's send time of the token (same machine, same clock);
 * - first token added p50/p99: the same for each run's first token;
 * - peak RSS of the process tree during the load; bytes written to storage per run (the tree's
 *   /proc/<pid>/io write_bytes over the load, divided by the runs);
 * - the load side (issue 33, the floor under the 200-run p99): CPU per second of wall time of the
 *   server's tree, the model server and this process (the SDK clients parsing the streams), the
 *   machine's busy share (/proc/stat); the model server's and the clients' CPU per 1,000 tokens,
 *   and what the cores leave for the server at the nominal rate (runs x 1,000 / interval tokens
 *   a second; a starved machine streams slower, so the per-second figures understate it): cores
 *   x 1,000 ms less the model server's and the clients' CPU per second at that rate.
 *
 *   npm run bench:tokens -- [--concurrency 1,50,200] [--tokens 1000] [--token-interval-ms 10]
 *     [--workers <n>|default] [--only ours|peer] [--json]
 *
 * Not part of the test suite.
 */
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { machineCpu, pct, ROOT, startModel, treeStats } from "./children.ts";
import { measured, ours, peer, type Running, startSide, streamRun } from "./side-by-side.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const list = (s: string) => s.split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
const CONCURRENCY = list(arg("--concurrency") ?? "1,50,200");
const TOKENS = Number(arg("--tokens") ?? 1000) || 1000;
const INTERVAL = Number(arg("--token-interval-ms") ?? 10);
const ONLY = arg("--only");
/**
 * Runs each server executes at once: by default the largest load's (agentcli's default is 4 per
 * CPU, the peer's 10), so every run of it runs at once; `--workers default` leaves each its own.
 */
const WORKERS = arg("--workers") === "default" ? undefined : Number(arg("--workers") ?? Math.max(...CONCURRENCY));
const graphs = { bench: join(ROOT, "bench/graph.ts") };

interface TokenSends {
  prompt: string;
  sentAt: number[];
}

type Model = Awaited<ReturnType<typeof startModel>>;

async function level(server: Running, model: Model, runs: number, tag: string) {
  await fetch(`${model.root}/_sends`, { method: "DELETE" });
  const prompts = Array.from({ length: runs }, (_, k) => `${tag} run ${k}`);
  const t0 = performance.now(), bench0 = process.cpuUsage(), model0 = treeStats(model.proc.pid!).cpuMs;
  const busy0 = machineCpu();
  const m = await measured(server.proc, () => Promise.all(prompts.map((p) => streamRun(server, p, TOKENS))));
  const bench = process.cpuUsage(bench0), busy = machineCpu();
  const modelMs = treeStats(model.proc.pid!).cpuMs - model0;
  const perS = (ms: number) => (ms / (performance.now() - t0)) * 1000;
  const sends = new Map(
    ((await (await fetch(`${model.root}/_sends`)).json()) as TokenSends[]).map((s) => [s.prompt, s.sentAt]),
  );
  const added: number[] = [], first: number[] = [];
  prompts.forEach((p, k) => {
    const sent = sends.get(p);
    if (!sent || sent.length !== TOKENS) throw new Error(`the model server has no ${TOKENS} send times for "${p}"`);
    m.value[k]!.forEach((at, i) => added.push(at - sent[i]!));
    first.push(m.value[k]![0]! - sent[0]!);
  });
  return {
    runs,
    cpuMsPer1kTokens: m.cpuMs / (runs * TOKENS / 1000),
    addedP50: pct(added, 50),
    addedP99: pct(added, 99),
    firstAddedP50: pct(first, 50),
    firstAddedP99: pct(first, 99),
    peakRssMb: m.peakRssMb,
    bytesWrittenPerRun: m.writeBytes / runs,
    serverCpuMsPerS: perS(m.cpuMs),
    modelCpuMsPerS: perS(modelMs),
    clientsCpuMsPerS: perS((bench.user + bench.system) / 1000),
    machineBusyShare: (busy.busy - busy0.busy) / (busy.total - busy0.total),
    modelCpuMsPer1kTokens: modelMs / (runs * TOKENS / 1000),
    clientsCpuMsPer1kTokens: (bench.user + bench.system) / 1000 / (runs * TOKENS / 1000),
    leftForServerMsPerS: cpus().length * 1000 -
      ((modelMs + (bench.user + bench.system) / 1000) / (runs * TOKENS)) * runs * (INTERVAL > 0 ? 1000 / INTERVAL : 0),
  };
}

type Level = Awaited<ReturnType<typeof level>>;

const model = await startModel({ tokens: TOKENS, tokenIntervalMs: INTERVAL });
const env = { ...process.env, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "bench", NO_COLOR: "1" };
const results: Record<string, Record<number, Level>> = {};
try {
  for (const side of [ours, peer]) {
    if (ONLY && (ONLY === "ours") !== (side === ours)) continue;
    process.stderr.write(`measuring ${side.name}...\n`);
    const server = await startSide(side, env, { graphs, graphId: "bench", workers: WORKERS });
    try {
      await streamRun(server, "warm-up", TOKENS); // graph loaded, connections open
      results[side.name] = {};
      for (const c of CONCURRENCY) {
        process.stderr.write(`  ${c} concurrent runs of ${TOKENS} tokens...\n`);
        results[side.name]![c] = await level(server, model, c, `${side.name} ${c}`);
      }
    } finally {
      await server.stop();
    }
  }
} finally {
  model.proc.kill("SIGTERM");
}

/** Label, figure, unit; `false` for the load side's figures, which have no ratio (they are not the server's). */
const rows: Array<[string, (l: Level) => number, string, boolean?]> = [
  ["CPU per 1,000 tokens", (l) => l.cpuMsPer1kTokens, "ms"],
  ["added delay p50", (l) => l.addedP50, "ms"],
  ["added delay p99", (l) => l.addedP99, "ms"],
  ["first token added p50", (l) => l.firstAddedP50, "ms"],
  ["first token added p99", (l) => l.firstAddedP99, "ms"],
  ["peak RSS (process tree)", (l) => l.peakRssMb, "MB"],
  ["bytes written to storage per run", (l) => l.bytesWrittenPerRun / 1024, "KB"],
  ["server CPU per s", (l) => l.serverCpuMsPerS, "ms", false],
  ["model server CPU per s", (l) => l.modelCpuMsPerS, "ms", false],
  ["SDK clients (this process) CPU per s", (l) => l.clientsCpuMsPerS, "ms", false],
  [`machine busy (of ${cpus().length} cores)`, (l) => l.machineBusyShare * 100, "%", false],
  ["model server CPU per 1,000 tokens", (l) => l.modelCpuMsPer1kTokens, "ms", false],
  ["SDK clients CPU per 1,000 tokens", (l) => l.clientsCpuMsPer1kTokens, "ms", false],
  ["cores left for the server per s at the nominal rate", (l) => l.leftForServerMsPerS, "ms", false],
];
const a = results[ours.name], b = results[peer.name];
/** The peer's figure over ours: above 1, ours is better (every figure here is better lower). */
const ratio = (c: number, get: (l: Level) => number, server = true) =>
  server && a?.[c] && b?.[c] && get(a[c]!) > 0 ? get(b[c]!) / get(a[c]!) : null;
const loadAvg = loadavg().map((l) => Number(l.toFixed(1)));
if (args.includes("--json")) {
  const ratios = Object.fromEntries(
    CONCURRENCY.map((
      c,
    ) => [c, Object.fromEntries(rows.map(([label, get, , server]) => [label, ratio(c, get, server)]))]),
  );
  const meta = { date: new Date().toISOString(), cpus: cpus().length, loadavg: loadAvg, node: process.versions.node };
  console.log(
    JSON.stringify(
      { ...meta, tokens: TOKENS, tokenIntervalMs: INTERVAL, workers: WORKERS ?? "default", results, ratios },
      null,
      2,
    ),
  );
} else {
  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  console.log(
    `${new Date().toISOString().slice(0, 10)}, ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, load average ${
      loadAvg.join(" ")
    }, Node ${process.versions.node}, ${TOKENS} tokens per run, one every ${INTERVAL} ms, workers: ${
      WORKERS ?? "each server's default"
    }`,
  );
  console.log(`| runs | metric | ${ours.name} | ${peer.name} | ratio |\n|---:|---|---:|---:|---:|`);
  for (const c of CONCURRENCY) {
    for (const [label, get, unit, server] of rows) {
      const cell = (l: Level | undefined) => (l ? `${f(get(l))} ${unit}` : "-");
      const r = ratio(c, get, server);
      console.log(`| ${c} | ${label} | ${cell(a?.[c])} | ${cell(b?.[c])} | ${r === null ? "-" : `${r.toFixed(1)}x`} |`);
    }
  }
}
