/**
 * Benchmark: `agentcli dev`, and `agentcli serve` on PostgreSQL, vs `@langchain/langgraph-cli
 * dev` (the peer) serving the same one-node graph (bench/graph.ts: `ChatOpenAI` against the local OpenAI-wire model server,
 * bench/model.ts), side by side in one process tree, offline. Measures, per server:
 * - startup: spawn to the first `200` from `GET /ok` (ours on a new project, so a new
 *   embedded database; the peer keeps everything in memory);
 * - idle RSS of the server's whole process tree, after warm-up;
 * - create-and-wait on new threads (`threads.create` + `runs.wait`) at 1 and at 32 clients:
 *   runs per second, p50 and p99 latency;
 * - the server's CPU time per run (user + system of its process tree) at 1 and 32 clients;
 * - time to the first SSE event of `runs.stream` on a new thread (p50).
 * Prints a table with ratios (>1 means agentcli is better). `--json` prints every figure for
 * machines, and with it those of bench/tokens.ts (token streaming) and bench/steps.ts
 * (multi-step runs), run after these at their default sizes, then bench/floor.ts (the same
 * graphs with no server, against those two's figures) (`--no-streams`: not them;
 * `--stream-args "<flags>"`: flags for all three, say `"--concurrency 2 --tokens 50 --clients 1 --runs 1"`).
 *
 *   npm run bench -- [--runs 60] [--only ours|serve|peer] [--json [--no-streams] [--stream-args "<flags>"]]
 *   npm run bench -- --startup [5]     # startup only: the example from sources and executable, beside the peer
 *   npm run bench -- --usage-overhead [--only serve] [--usage-limits] [--runs 60]
 *       # agentcli dev (or serve) with AGENTCLI_USAGE=off, then on: runs/s and server CPU per run,
 *       # and the overhead of recording usage (--usage-limits: with budgets set too, so every run
 *       # is admitted against the counters and every model call raises them)
 *
 * Not part of the test suite. Each server and the model run as child processes on free ports.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { freePort } from "../plugins/compute/revision-process.ts";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import {
  input,
  pct,
  ROOT,
  runLoad,
  sleep,
  startAgentcliDev,
  startModel,
  startPeer,
  stopTree,
  treeStats,
  waitOk,
  writeBenchProject,
} from "./children.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS = Number(arg("--runs") ?? 60) || 60;
const ONLY = arg("--only") ?? null;
const GRAPH = join(ROOT, "bench/graph.ts");

interface Target {
  name: string;
  /** Before the clock starts (a bundle to build, say). */
  setup?(dir: string, env: NodeJS.ProcessEnv): void;
  start(port: number, dir: string, env: NodeJS.ProcessEnv): ChildProcess;
}

const ours: Target = {
  name: "agentcli dev",
  start: (port, dir, env) => startAgentcliDev(port, dir, env, ["--graph", `bench=${GRAPH}`]),
};

/**
 * `agentcli serve` of the same project's bundle (`deploy --dry-run`) on PostgreSQL (a new
 * schema of AGENTCLI_BENCH_DATABASE_URL, default the tests' local server), with the platform
 * API key posture `serve` requires; skipped when PostgreSQL cannot be reached.
 */
const PG_URL = process.env.AGENTCLI_BENCH_DATABASE_URL ?? process.env.AGENTCLI_TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test";
const SERVE_KEY = "bench-key";
const served: Target & { prepare(): Promise<() => Promise<void>> } = {
  name: "agentcli serve (PostgreSQL)",
  schema: `agentcli_bench_${process.pid}`,
  async prepare() {
    const { openSql } = await import("../core/storage/sql.ts");
    const admin = await openSql({ url: PG_URL, poolSize: 1 });
    await admin.query(`CREATE SCHEMA ${this.schema}`);
    await admin.close();
    return async () => {
      const a = await openSql({ url: PG_URL, poolSize: 1 });
      await a.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
      await a.close();
    };
  },
  setup(dir, env) {
    writeBenchProject(dir, false); // `serve` refuses anonymous access: the platform API key
    const deploy = spawnSync(process.execPath, [
      join(ROOT, "bin/agentcli.js"),
      "deploy",
      "--dry-run",
      "--config",
      join(dir, "agent.toml"),
    ], { cwd: dir, env, encoding: "utf8" });
    if (deploy.status !== 0) throw new Error(`deploy --dry-run failed: ${deploy.stderr}`);
  },
  start(port, dir, env) {
    const sep = PG_URL.includes("?") ? "&" : "?";
    return spawn(process.execPath, [
      join(ROOT, "bin/agentcli.js"),
      "serve",
      join(dir, ".agentcli/bundle.tgz"),
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--graph",
      `bench=${GRAPH}`,
    ], {
      stdio: ["ignore", "ignore", process.env.BENCH_VERBOSE ? "inherit" : "ignore"],
      cwd: dir,
      env: {
        ...env,
        PLATFORM_API_KEY: SERVE_KEY,
        DATABASE_URL: `${PG_URL}${sep}options=${encodeURIComponent(`-c search_path=${this.schema}`)}`,
      },
      detached: true,
    });
  },
} as Target & { schema: string; prepare(): Promise<() => Promise<void>> };

const peer: Target = {
  name: "langgraph-cli dev",
  start: (port, dir, env) => startPeer(port, dir, env),
};

/** The assistant of the graph "bench" (both servers make one per graph). */
let assistantId = "bench";

const load = (client: Client, clients: number, total: number) => runLoad(client, assistantId, clients, total);

async function firstEvent(client: Client, n: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const th = await client.threads.create();
    const s = performance.now();
    let first = true;
    for await (const _ of client.runs.stream(th.thread_id, assistantId, { input, streamMode: "values" })) {
      if (first) xs.push(performance.now() - s);
      first = false; // drain the run, so the next one starts on an idle server
    }
  }
  return pct(xs, 50);
}

type Result = Awaited<ReturnType<typeof measure>>;

async function measure(target: Target, env: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-"));
  const port = await freePort("127.0.0.1");
  target.setup?.(dir, env);
  const t0 = performance.now();
  const proc = target.start(port, dir, env);
  try {
    const url = `http://127.0.0.1:${port}`;
    const startup = await waitOk(url, t0, proc);
    // The SDK's Client sends at most 4 requests at once unless told otherwise: 32 clients must be 32.
    const client = new Client({
      apiUrl: url,
      apiKey: target === served ? SERVE_KEY : null,
      callerOptions: { maxRetries: 0, maxConcurrency: Infinity },
    });
    const found = await client.assistants.search({ graphId: "bench", limit: 10 });
    if (found.length !== 1) throw new Error(`expected one assistant of graph "bench", found ${found.length}`);
    assistantId = found[0]!.assistant_id;
    await load(client, 1, 5); // warm-up: graph loaded, connections open
    await sleep(1000);
    const rss = treeStats(proc.pid!).rssMb;
    const cpu0 = treeStats(proc.pid!).cpuMs;
    const one = await load(client, 1, RUNS);
    const cpu1 = treeStats(proc.pid!).cpuMs;
    const many = await load(client, 32, RUNS * 4);
    const cpu2 = treeStats(proc.pid!).cpuMs;
    const sse = await firstEvent(client, 11);
    // The server's CPU time per run (user + system of its process tree), at 1 and at 32 clients.
    return {
      startup,
      rss,
      one: { ...one, cpuMsPerRun: (cpu1 - cpu0) / RUNS },
      many: { ...many, cpuMsPerRun: (cpu2 - cpu1) / (RUNS * 4) },
      sse,
    };
  } finally {
    await stopTree(proc);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `--startup [n]`: only startup, n times each (default 5), medians: `agentcli dev` on
 * examples/research from the sources and from the executable (dist/agentcli, when built),
 * beside the peer: spawn to the first 200 from `GET /ok`, and to the first answer of the API
 * (`POST /assistants/search`), which waits for everything behind `/ok` to load.
 */
async function startupOnly(runs: number, env: NodeJS.ProcessEnv): Promise<void> {
  const exe = join(ROOT, "dist/agentcli");
  const example = (name: string, cmd: string[]): Target => ({
    name,
    start: (port, dir, env) => {
      cpSync(join(ROOT, "examples/research"), dir, {
        recursive: true,
        filter: (p) => !p.includes("/.agentcli") && !p.endsWith("/.env"),
      });
      return spawn(cmd[0]!, [...cmd.slice(1), "dev", "--config", join(dir, "agent.toml"), "--port", String(port)], {
        stdio: ["ignore", "ignore", process.env.BENCH_VERBOSE ? "inherit" : "ignore"],
        cwd: dir,
        env,
        detached: true,
      });
    },
  });
  const targets = [
    example("agentcli dev (node bin/agentcli.js)", [process.execPath, join(ROOT, "bin/agentcli.js")]),
    ...(existsSync(exe) ? [example("agentcli dev (dist/agentcli)", [exe])] : []),
    peer,
  ];
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rows: Array<{ name: string; ok: number; api: number }> = [];
  for (const t of targets) {
    const ok: number[] = [], api: number[] = [];
    for (let i = 0; i < runs; i++) {
      const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-"));
      const port = await freePort("127.0.0.1");
      const t0 = performance.now();
      const proc = t.start(port, dir, env);
      try {
        ok.push(await waitOk(`http://127.0.0.1:${port}`, t0, proc));
        const res = await fetch(`http://127.0.0.1:${port}/assistants/search`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        if (!res.ok) throw new Error(`${t.name}: /assistants/search answered ${res.status}`);
        api.push(performance.now() - t0);
      } finally {
        await stopTree(proc, 5000);
        rmSync(dir, { recursive: true, force: true });
      }
    }
    rows.push({ name: t.name, ok: med(ok), api: med(api) });
  }
  if (args.includes("--json")) console.log(JSON.stringify(rows, null, 2));
  const base = rows.at(-1)!;
  console.log(
    `${new Date().toISOString().slice(0, 10)}, ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, load ${
      loadavg()[0]!.toFixed(1)
    }, Node ${process.versions.node}, median of ${runs} starts (ratio: the peer's time / ours)`,
  );
  console.log("| server | first /ok | ratio | first API answer | ratio |\n|---|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.ok.toFixed(0)} ms | ${(base.ok / r.ok).toFixed(1)}x | ${r.api.toFixed(0)} ms | ${
        (base.api / r.api).toFixed(1)
      }x |`,
    );
  }
}

if (args.includes("--startup")) {
  await startupOnly(Number(arg("--startup")) || 5, { ...process.env, NO_COLOR: "1" });
  process.exit(0);
}

/**
 * `--usage-overhead`: one of our servers measured with usage recording off, then on (the
 * bench graph's model calls report tokens, so every run records one call); prints the
 * figures side by side and what recording costs, in percent.
 */
async function usageOverhead(): Promise<void> {
  const target = ONLY === "serve" ? served : ours;
  const model = await startModel();
  const base = { ...process.env, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "bench", NO_COLOR: "1" };
  const limits = args.includes("--usage-limits")
    ? { AGENTCLI_USER_RUNS_PER_MINUTE: "1000000", AGENTCLI_USER_TOKENS_PER_DAY: "1000000000000" }
    : {};
  const out: Record<string, Result> = {};
  try {
    for (const mode of ["off", "on"]) {
      const drop = target === served ? await served.prepare() : null;
      process.stderr.write(`measuring ${target.name} with AGENTCLI_USAGE=${mode}...\n`);
      try {
        out[mode] = await measure(target, { ...base, AGENTCLI_USAGE: mode, ...(mode === "on" ? limits : {}) });
      } finally {
        await drop?.();
      }
    }
  } finally {
    model.proc.kill("SIGTERM");
  }
  const rows: Array<[string, (r: Result) => number]> = [
    ["1 client: runs/s", (r) => r.one.rps],
    ["1 client: server CPU per run (ms)", (r) => r.one.cpuMsPerRun],
    ["32 clients: runs/s", (r) => r.many.rps],
    ["32 clients: server CPU per run (ms)", (r) => r.many.cpuMsPerRun],
    ["first SSE event p50 (ms)", (r) => r.sse],
  ];
  console.log(
    `${target.name}, ${RUNS} runs at 1 client, ${RUNS * 4} at 32${
      limits.AGENTCLI_USER_RUNS_PER_MINUTE ? ", budgets set" : ""
    }`,
  );
  console.log("| metric | usage off | usage on | change |");
  console.log("|---|---:|---:|---:|");
  for (const [label, get] of rows) {
    const off = get(out.off!), on = get(out.on!);
    console.log(`| ${label} | ${off.toFixed(2)} | ${on.toFixed(2)} | ${(((on - off) / off) * 100).toFixed(1)}% |`);
  }
}

if (args.includes("--usage-overhead")) {
  await usageOverhead();
  process.exit(0);
}

const model = await startModel();
const env = { ...process.env, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "bench", NO_COLOR: "1" };
const results: Record<string, Result> = {};
try {
  for (const t of [ours, served, peer]) {
    if (
      ONLY && !t.name.startsWith(ONLY === "ours" ? "agentcli dev" : ONLY === "serve" ? "agentcli serve" : "langgraph")
    ) continue;
    let drop: (() => Promise<void>) | null = null;
    if (t === served) {
      try {
        drop = await served.prepare();
      } catch (err) {
        process.stderr.write(
          `skipping ${t.name}: cannot reach PostgreSQL at ${PG_URL.replace(/\/\/[^@/]*@/, "//")} (${
            (err as Error).message
          })\n`,
        );
        continue;
      }
    }
    process.stderr.write(`measuring ${t.name}...\n`);
    try {
      results[t.name] = await measure(t, env);
    } finally {
      await drop?.();
    }
  }
} finally {
  model.proc.kill("SIGTERM");
}

const a = results[ours.name], b = results[peer.name], c = results[served.name];
const rows: Array<[string, (r: Result) => number, "lower" | "higher", string]> = [
  ["startup to first /ok", (r) => r.startup, "lower", "ms"],
  ["idle RSS (process tree)", (r) => r.rss, "lower", "MB"],
  ["1 client: runs/s", (r) => r.one.rps, "higher", ""],
  ["1 client: p50", (r) => r.one.p50, "lower", "ms"],
  ["1 client: p99", (r) => r.one.p99, "lower", "ms"],
  ["1 client: server CPU per run", (r) => r.one.cpuMsPerRun, "lower", "ms"],
  ["32 clients: runs/s", (r) => r.many.rps, "higher", ""],
  ["32 clients: p50", (r) => r.many.p50, "lower", "ms"],
  ["32 clients: p99", (r) => r.many.p99, "lower", "ms"],
  ["32 clients: server CPU per run", (r) => r.many.cpuMsPerRun, "lower", "ms"],
  ["first SSE event (p50)", (r) => r.sse, "lower", "ms"],
];
/** Ours against the peer's: above 1, ours is better. */
const ratioOf = (ours: Result | undefined, get: (r: Result) => number, better: "lower" | "higher") =>
  ours && b ? (better === "lower" ? get(b) / get(ours) : get(ours) / get(b)) : null;
const loadAvg = loadavg().map((l) => Number(l.toFixed(1)));
/**
 * bench/tokens.ts and bench/steps.ts (dev and the peer only), then bench/floor.ts (`more`: its flags),
 * with `--json`, after this bench's servers stopped; their JSON, or null with `--no-streams` or `--only serve`.
 */
function streamBench(script: string, more?: string[]): unknown {
  if (args.includes("--no-streams") || ONLY === "serve") return null;
  const only = more ?? (ONLY === "ours" || ONLY === "peer" ? ["--only", ONLY] : []);
  process.stderr.write(`running ${script}...\n`);
  const extra = (arg("--stream-args") ?? "").split(" ").filter(Boolean);
  const out = spawnSync(process.execPath, [join(ROOT, script), "--json", ...only, ...extra], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 << 20,
  });
  if (out.status !== 0) throw new Error(`${script} failed (exit ${out.status})`);
  return JSON.parse(out.stdout);
}

if (args.includes("--json")) {
  // For machines: every figure of each server, and each metric's ratio to the peer's (>1: agentcli better).
  const ratios = (r: Result | undefined) =>
    Object.fromEntries(rows.map(([label, get, better]) => [label, ratioOf(r, get, better)]));
  const tokens = streamBench("bench/tokens.ts");
  const steps = streamBench("bench/steps.ts");
  // The floor (the same graphs with no server), compared with the figures just measured.
  const dir = mkdtempSync(join(tmpdir(), "agentcli-floor-"));
  writeFileSync(join(dir, "tokens.json"), JSON.stringify(tokens));
  writeFileSync(join(dir, "steps.json"), JSON.stringify(steps));
  const floor = tokens && steps &&
    streamBench("bench/floor.ts", ["--tokens-json", join(dir, "tokens.json"), "--steps-json", join(dir, "steps.json")]);
  rmSync(dir, { recursive: true, force: true });
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        cpus: cpus().length,
        loadavg: loadAvg,
        node: process.versions.node,
        runs: RUNS,
        results,
        ratios: ratios(a),
        serveRatios: ratios(c),
        tokens,
        steps,
        floor,
      },
      null,
      2,
    ),
  );
} else {
  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const cell = (
    r: Result | undefined,
    get: (r: Result) => number,
    unit: string,
  ) => (r ? `${f(get(r))}${unit ? ` ${unit}` : ""}` : "-");
  const x = (n: number | null) => (n === null ? "-" : `${n.toFixed(1)}x`);
  console.log(
    `${new Date().toISOString().slice(0, 10)}, ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, load average ${
      loadAvg.join(" ")
    }, Node ${process.versions.node}, ${RUNS} runs at 1 client, ${RUNS * 4} at 32`,
  );
  console.log(`| metric | ${ours.name} | ${served.name} | ${peer.name} | ratio dev | ratio serve |`);
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const [label, get, better, unit] of rows) {
    console.log(
      `| ${label} | ${cell(a, get, unit)} | ${cell(c, get, unit)} | ${cell(b, get, unit)} | ${
        x(ratioOf(a, get, better))
      } | ${x(ratioOf(c, get, better))} |`,
    );
  }
}
