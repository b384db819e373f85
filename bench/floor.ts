/**
 * Benchmark (issue 33): the floor under bench:tokens and bench:steps. The same LangGraph.js
 * graphs (bench/graph.ts, bench/graph-steps.ts) run in this process, with no server (no HTTP,
 * no storage, no queue), against the same model server child (bench/model.ts); the CPU measured
 * is this process's only (`process.cpuUsage()`), the model server being another process as in
 * the benches. What is left of a server's CPU above this is the server's own.
 * - tokens: N concurrent `graph.stream(input, { streamMode: "messages" })` of bench/graph.ts
 *   (`--tokens`, one every `--token-interval-ms`): CPU per 1,000 tokens, and the added delay
 *   (each chunk's arrival less the model's send time of its token) p50/p99; bare, with each
 *   chunk `JSON.stringify`-ed (what any server does at least), with LangGraph's `MemorySaver`
 *   (what the peer keeps), and both;
 * - steps: bench/graph-steps.ts, `graph.invoke` by `--clients` concurrent clients, `--runs`
 *   each, `--steps` tool calls a run: CPU per step, bare and with `MemorySaver`.
 * Then ratios to the servers' figures (the quiet-machine figures in bench/README.md, or the JSON
 * of `npm run bench:tokens -- --json` / `bench:steps -- --json` given with `--tokens-json` /
 * `--steps-json`): ours = floor + X, peer = floor + Y, and whether half the peer's is below it.
 *
 *   npm run bench:floor -- [--only tokens|steps] [--concurrency 1,50,200] [--tokens 1000]
 *     [--token-interval-ms 10] [--clients 1,32] [--runs 4] [--steps 10]
 *     [--saver off|on] [--tokens-json <file>] [--steps-json <file>] [--json]
 *
 * Not part of the test suite.
 */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { MemorySaver } from "@langchain/langgraph";
import { machineCpu, pct, startModel, treeStats } from "./children.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const list = (s: string) => s.split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
const ONLY = arg("--only");
const CONCURRENCY = list(arg("--concurrency") ?? "1,50,200");
const TOKENS = Number(arg("--tokens") ?? 1000) || 1000;
const INTERVAL = Number(arg("--token-interval-ms") ?? 10);
const CLIENTS = list(arg("--clients") ?? "1,32");
const RUNS_PER_CLIENT = Number(arg("--runs") ?? 4) || 4;
const STEPS = Number(arg("--steps") ?? 10) || 10;
/** `--saver off|on`: only the variants without (or with) `MemorySaver` (to compare them under callgrind). */
const SAVER = arg("--saver");
const keep = (saver: boolean) => SAVER === undefined || (SAVER === "on") === saver;

/** The servers' figures to compare with: bench/README.md, issue 33 on a quiet machine (2026-11-27 19:45 UTC, load 0.7-1.2). */
const SERVERS = {
  source: "bench/README.md, quiet machine 2026-11-27 19:45 UTC (load 0.7-1.2)",
  tokens: { ours: { 1: 1340, 50: 241, 200: 162 }, peer: { 1: 1910, 50: 260, 200: 218 } } as Figures,
  steps: { ours: { 1: 12.0, 32: 8.3 }, peer: { 1: 14.5, 32: 9.2 } } as Figures,
};
type Figures = { ours: Record<number, number>; peer: Record<number, number> };

/** The servers' figures from a bench's `--json` output: `metric` of each side, per level. */
function figuresFrom(file: string, metric: string): Figures {
  const j = JSON.parse(readFileSync(file, "utf8")) as {
    results: Record<string, Record<number, Record<string, number>>>;
  };
  const side = (name: string) =>
    Object.fromEntries(Object.entries(j.results[name] ?? {}).map(([c, l]) => [Number(c), l[metric]!]));
  return { ours: side("agentcli dev"), peer: side("langgraph-cli dev") };
}

/** This process's CPU (ms), the model server's (ms), the machine's busy share (of all cores) and wall time (ms) over `work`. */
async function cpuOver<T>(
  model: { proc: { pid?: number } },
  work: () => Promise<T>,
): Promise<{ value: T; cpuMs: number; modelCpuMs: number; busyShare: number; wallMs: number }> {
  const c0 = process.cpuUsage(), m0 = treeStats(model.proc.pid!).cpuMs, b0 = machineCpu(), t0 = performance.now();
  const value = await work();
  const c = process.cpuUsage(c0), b = machineCpu();
  return {
    value,
    cpuMs: (c.user + c.system) / 1000,
    modelCpuMs: treeStats(model.proc.pid!).cpuMs - m0,
    busyShare: (b.busy - b0.busy) / (b.total - b0.total),
    wallMs: performance.now() - t0,
  };
}

type Model = Awaited<ReturnType<typeof startModel>>;
type Variant = { name: string; saver: boolean; json: boolean };
const TOKEN_VARIANTS: Variant[] = [
  { name: "graph", saver: false, json: false },
  { name: "graph + JSON.stringify", saver: false, json: true },
  { name: "graph + MemorySaver", saver: true, json: false },
  { name: "graph + MemorySaver + JSON.stringify", saver: true, json: true },
];

/** `runs` concurrent streams of bench/graph.ts in `variant`: CPU per 1,000 tokens, added delay p50/p99. */
async function tokenLevel(model: Model, variant: Variant, runs: number) {
  const { graph } = await import("./graph.ts");
  graph.checkpointer = variant.saver ? new MemorySaver() : undefined;
  const tag = `${variant.name} ${runs} ${Math.random()}`;
  const one = async (k: number) => {
    const got: number[] = [];
    const prompt = `${tag} run ${k}`;
    const stream = await graph.stream({ messages: [{ role: "user", content: prompt }] }, {
      streamMode: "messages",
      configurable: { thread_id: prompt },
    });
    for await (const chunk of stream) {
      const now = performance.timeOrigin + performance.now();
      if (variant.json) JSON.stringify(chunk);
      const content = (chunk as [{ content?: unknown }, unknown])[0]?.content;
      if (typeof content !== "string") continue;
      for (const m of content.matchAll(/ t(\d+)/g)) got[Number(m[1])] ??= now;
    }
    return { prompt, got };
  };
  await fetch(`${model.root}/_sends`, { method: "DELETE" });
  const m = await cpuOver(model, () => Promise.all(Array.from({ length: runs }, (_, k) => one(k))));
  graph.checkpointer = undefined;
  const sends = new Map(
    ((await (await fetch(`${model.root}/_sends`)).json()) as Array<{ prompt: string; sentAt: number[] }>)
      .map((s) => [s.prompt, s.sentAt]),
  );
  const added: number[] = [];
  for (const { prompt, got } of m.value) {
    const sent = sends.get(prompt);
    if (!sent || sent.length !== TOKENS || got.filter((t) => t !== undefined).length !== TOKENS) {
      throw new Error(`run "${prompt}": ${got.length} of ${TOKENS} tokens, ${sent?.length ?? 0} send times`);
    }
    got.forEach((at, i) => added.push(at - sent[i]!));
  }
  const perSecond = (ms: number) => (ms / m.wallMs) * 1000;
  return {
    runs,
    cpuMsPer1kTokens: m.cpuMs / (runs * TOKENS / 1000),
    addedP50: pct(added, 50),
    addedP99: pct(added, 99),
    cpuMsPerSecond: perSecond(m.cpuMs),
    modelCpuMsPerSecond: perSecond(m.modelCpuMs),
    machineBusy: m.busyShare,
  };
}

/** `clients` concurrent clients, `RUNS_PER_CLIENT` invokes each, of bench/graph-steps.ts: CPU per step. */
async function stepLevel(model: Model, saver: boolean, clients: number) {
  const { graph } = await import("./graph-steps.ts");
  graph.checkpointer = saver ? new MemorySaver() : undefined;
  let id = 0;
  const one = async () => {
    const out = await graph.invoke({ messages: [{ role: "user", content: "work" }] }, {
      configurable: { thread_id: `t${id++}` },
      recursionLimit: 2 * STEPS + 5,
    });
    if (out.messages.length !== 2 + 2 * STEPS) throw new Error(`a run ended with ${out.messages.length} messages`);
  };
  for (let i = 0; i < 2; i++) await one(); // warm-up, as bench:steps does
  const m = await cpuOver(model, () =>
    Promise.all(Array.from({ length: clients }, async () => {
      for (let k = 0; k < RUNS_PER_CLIENT; k++) await one();
    })));
  graph.checkpointer = undefined;
  const total = clients * RUNS_PER_CLIENT;
  return {
    clients,
    cpuMsPerStep: m.cpuMs / (total * STEPS),
    runsPerSecond: (total / m.wallMs) * 1000,
    modelCpuMsPerStep: m.modelCpuMs / (total * STEPS),
    machineBusy: m.busyShare,
  };
}

/** Starts the model server, runs `work`, stops it (SIGTERM: `startModel`'s child is no process group leader). */
async function withModel<T>(options: Parameters<typeof startModel>[0], work: (m: Model) => Promise<T>): Promise<T> {
  const model = await startModel(options);
  process.env.OPENAI_BASE_URL = model.url; // read by the graph modules when first imported
  process.env.OPENAI_API_KEY ??= "bench";
  try {
    return await work(model);
  } finally {
    const exited = new Promise((r) => model.proc.once("exit", r));
    model.proc.kill("SIGTERM");
    await exited;
  }
}

const loadBefore = loadavg().map((l) => Number(l.toFixed(1)));
const tokens: Record<string, Record<number, Awaited<ReturnType<typeof tokenLevel>>>> = {};
const steps: Record<string, Record<number, Awaited<ReturnType<typeof stepLevel>>>> = {};
if (ONLY !== "steps") {
  await withModel({ tokens: TOKENS, tokenIntervalMs: INTERVAL }, async (model) => {
    for (const v of TOKEN_VARIANTS.filter((v) => keep(v.saver))) {
      process.stderr.write(`tokens: ${v.name}...\n`);
      await tokenLevel(model, v, 1); // warm-up: modules loaded, connection open, code compiled
      tokens[v.name] = {};
      for (const c of CONCURRENCY) tokens[v.name]![c] = await tokenLevel(model, v, c);
    }
  });
}
// The graph modules read OPENAI_BASE_URL once: the steps' model server must be the one they hold.
if (ONLY !== "tokens") {
  await withModel({ steps: STEPS }, async (model) => {
    for (const saver of [false, true].filter(keep)) {
      const name = saver ? "graph + MemorySaver" : "graph";
      process.stderr.write(`steps: ${name}...\n`);
      steps[name] = {};
      for (const c of CLIENTS) steps[name]![c] = await stepLevel(model, saver, c);
    }
  });
}

const tokenServers = arg("--tokens-json") ? figuresFrom(arg("--tokens-json")!, "cpuMsPer1kTokens") : SERVERS.tokens;
const stepServers = arg("--steps-json") ? figuresFrom(arg("--steps-json")!, "cpuMsPerStep") : SERVERS.steps;
/** Floor against the servers at one level: ours = floor + X, peer = floor + Y, half the peer's, and whether it is below the floor. */
function against(floor: number, servers: Figures, level: number) {
  const ours = servers.ours[level], peer = servers.peer[level];
  if (ours === undefined || peer === undefined) return null;
  return {
    floor,
    ours,
    peer,
    oursAbove: ours - floor,
    peerAbove: peer - floor,
    floorOverOurs: floor / ours,
    floorOverPeer: floor / peer,
    halfPeer: peer / 2,
    halfPeerBelowFloor: peer / 2 < floor,
  };
}
const comparisons = {
  source: arg("--tokens-json") || arg("--steps-json") ? "the --tokens-json / --steps-json files" : SERVERS.source,
  tokens: Object.fromEntries(
    Object.entries(tokens).map(([v, ls]) => [
      v,
      Object.fromEntries(CONCURRENCY.map((c) => [c, against(ls[c]!.cpuMsPer1kTokens, tokenServers, c)])),
    ]),
  ),
  steps: Object.fromEntries(
    Object.entries(steps).map(([v, ls]) => [
      v,
      Object.fromEntries(CLIENTS.map((c) => [c, against(ls[c]!.cpuMsPerStep, stepServers, c)])),
    ]),
  ),
};
const meta = {
  date: new Date().toISOString(),
  cpus: cpus().length,
  loadavg: { before: loadBefore, after: loadavg().map((l) => Number(l.toFixed(1))) },
  node: process.versions.node,
};
if (args.includes("--json")) {
  const sizes = { tokens: TOKENS, tokenIntervalMs: INTERVAL, steps: STEPS, runsPerClient: RUNS_PER_CLIENT };
  console.log(JSON.stringify({ ...meta, ...sizes, results: { tokens, steps }, comparisons }, null, 2));
} else {
  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const pc = (n: number) => `${(n * 100).toFixed(0)}%`;
  console.log(
    `${meta.date.slice(0, 16)}, ${meta.cpus} x ${cpus()[0]?.model ?? "cpu"}, load average ${
      meta.loadavg.before.join(" ")
    } before, ${meta.loadavg.after.join(" ")} after, Node ${meta.node}; CPU of this process only`,
  );
  if (Object.keys(tokens).length) {
    console.log(`\nTokens: ${TOKENS} a run, one every ${INTERVAL} ms, streamMode "messages"`);
    console.log(
      "| runs | floor | CPU per 1,000 tokens | added p50 / p99 | this process / model server CPU per s | machine busy |",
    );
    console.log("|---:|---|---:|---:|---:|---:|");
    for (const c of CONCURRENCY) {
      for (const [v, ls] of Object.entries(tokens)) {
        const l = ls[c]!;
        console.log(
          `| ${c} | ${v} | ${f(l.cpuMsPer1kTokens)} ms | ${f(l.addedP50)} / ${f(l.addedP99)} ms | ${
            f(l.cpuMsPerSecond)
          } / ${f(l.modelCpuMsPerSecond)} ms | ${pc(l.machineBusy)} |`,
        );
      }
    }
  }
  if (Object.keys(steps).length) {
    console.log(`\nSteps: ${STEPS} a run, ${RUNS_PER_CLIENT} runs per client, graph.invoke`);
    console.log("| clients | floor | CPU per step | runs/s | model server CPU per step | machine busy |");
    console.log("|---:|---|---:|---:|---:|---:|");
    for (const c of CLIENTS) {
      for (const [v, ls] of Object.entries(steps)) {
        const l = ls[c]!;
        console.log(
          `| ${c} | ${v} | ${f(l.cpuMsPerStep)} ms | ${f(l.runsPerSecond)} | ${f(l.modelCpuMsPerStep)} ms | ${
            pc(l.machineBusy)
          } |`,
        );
      }
    }
  }
  console.log(`\nAgainst the servers (${comparisons.source}): ours = floor + X, peer = floor + Y`);
  console.log("| bench | level | floor of | floor | ours (X) | peer (Y) | floor/ours | floor/peer | half the peer's |");
  console.log("|---|---:|---|---:|---:|---:|---:|---:|---|");
  for (const [bench, byVariant] of Object.entries(comparisons).filter(([k]) => k !== "source")) {
    for (const [v, levels] of Object.entries(byVariant as Record<string, Record<number, ReturnType<typeof against>>>)) {
      for (const [level, r] of Object.entries(levels)) {
        if (!r) continue;
        console.log(
          `| ${bench} | ${level} | ${v} | ${f(r.floor)} | ${f(r.ours)} (+${f(r.oursAbove)}) | ${f(r.peer)} (+${
            f(r.peerAbove)
          }) | ${pc(r.floorOverOurs)} | ${pc(r.floorOverPeer)} | ${f(r.halfPeer)}${
            r.halfPeerBelowFloor ? ": below the floor" : ""
          } |`,
        );
      }
    }
  }
}
