/**
 * Benchmark: `agentcli serve` replicas on one PostgreSQL (signals over PostgreSQL
 * LISTEN/NOTIFY, and over Redis), behind a round-robin load balancer (HAProxy when installed,
 * else bench/proxy.ts), with a model
 * that answers 200 ms after each call (bench/model.ts `--delay-ms`). For 1 and for 3
 * replicas (a new schema each time), at 32 and at 128 clients: create-and-wait runs on new
 * threads (`threads.create` + `runs.wait` through the proxy), runs/s, p50 and p99, the
 * replicas' CPU time per run and how busy the whole machine was. With 2 or more replicas,
 * the first event of a run created on replica A and joined (`runs.joinStream`) on replica B,
 * against joined on A itself. Prints the ratios (3 vs 1 replicas, in runs/s and in the CPU per
 * run of everything serving: replicas, PostgreSQL, Redis, proxy; cross vs same replica) and the
 * load average.
 *
 *   npm run bench:replicas -- [--replicas 1,3] [--clients 32,128] [--runs-per-client 8]
 *     [--mode postgres|redis|both] [--model-ms 200] [--workers <n>] [--proxy haproxy|node]
 *     [--balance roundrobin|leastconn] [--server serve|ceiling] [--json]
 *
 * PostgreSQL: AGENTCLI_BENCH_DATABASE_URL (default the tests' local server); Redis:
 * AGENTCLI_BENCH_REDIS_URL (default the tests' local one). BENCH_CPU_PROF=<dir>: each replica
 * writes a CPU profile there (`node --cpu-prof`); BENCH_REPLICA_NODE_FLAGS: Node flags for the
 * replicas (say `--max-semi-space-size=32`). Not part of the test suite.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import {
  input,
  machineCpu,
  pct,
  ROOT,
  runLoad,
  sleep,
  startModel,
  stopTree,
  treeStats,
  waitOk,
  writeBenchProject,
} from "./children.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const list = (s: string) => s.split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
const REPLICAS = list(arg("--replicas") ?? "1,3");
const CLIENTS = list(arg("--clients") ?? "32,128");
// 8 runs per client: a load of a few seconds at least (4 made 128 runs at 32 clients, ~2 s, whose runs/s moved with the machine's every hiccup).
const RUNS_PER_CLIENT = Number(arg("--runs-per-client") ?? 8) || 8;
const MODES = (arg("--mode") ?? "both") === "both"
  ? ["postgres", "redis"] as const
  : [arg("--mode") as "postgres" | "redis"];
const MODEL_MS = Number(arg("--model-ms") ?? 200);
const WORKERS = arg("--workers");
const FIRST_EVENT_SAMPLES = 21;
/**
 * `serve`: agentcli's replicas. `ceiling`: bench/ceiling-server.ts `--mode postgres` as the
 * replicas: the bench graph invoked in process behind bare `node:http`, with agentcli's
 * storage on the same PostgreSQL and nothing else (no queue, no worker limit, no streaming,
 * auth, validation or bus): what this machine allows any server doing that much durable work.
 */
const SERVER = arg("--server") ?? "serve";
if (SERVER !== "serve" && SERVER !== "ceiling") throw new Error(`--server: serve or ceiling, not "${SERVER}"`);
const HAPROXY = ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy", "/usr/bin/haproxy"].find((p) => existsSync(p));
const PROXY = arg("--proxy") ?? (HAPROXY ? "haproxy" : "node");
if (PROXY !== "node" && PROXY !== "haproxy") throw new Error(`--proxy: node or haproxy, not "${PROXY}"`);
/** HAProxy's choice of replica per request: the next one (`roundrobin`, the default) or the one with the fewest open requests (`leastconn`). */
const BALANCE = arg("--balance") ?? "roundrobin";
if (BALANCE !== "roundrobin" && BALANCE !== "leastconn") {
  throw new Error(`--balance: roundrobin or leastconn, not "${BALANCE}"`);
}
if (BALANCE !== "roundrobin" && PROXY !== "haproxy") throw new Error("--balance leastconn: with --proxy haproxy only");
if (PROXY === "haproxy" && !HAPROXY) {
  throw new Error("--proxy haproxy: haproxy is not installed (apt-get install haproxy), or use --proxy node");
}
const PG_URL = process.env.AGENTCLI_BENCH_DATABASE_URL ?? process.env.AGENTCLI_TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.AGENTCLI_BENCH_REDIS_URL ?? process.env.AGENTCLI_TEST_REDIS_URL ??
  "redis://127.0.0.1:6379";
const KEY = "bench-key";
const GRAPH = join(ROOT, "bench/graph.ts");

if (MODES.some((m) => m !== "postgres" && m !== "redis")) {
  throw new Error(`--mode: postgres, redis or both, not "${arg("--mode")}"`);
}

/**
 * CPU time (ms) used so far by every process whose command is `comm` (PostgreSQL's
 * backends), by pid: a delta over pids seen at both ends leaves out what exited meanwhile.
 */
function cpuByPid(comm: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== comm) continue;
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(d), (Number(f[11]) + Number(f[12])) * 10);
    } catch { /* gone */ }
  }
  return out;
}

function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, t] of after) ms += t - (before.get(pid) ?? 0);
  return ms;
}

/** The bench project's bundle (`deploy --dry-run`), built once through the real CLI. */
function buildBundle(dir: string): string {
  writeBenchProject(dir, false); // `serve` refuses anonymous access: the platform API key
  const deploy = spawnSync(process.execPath, [
    join(ROOT, "bin/agentcli.js"),
    "deploy",
    "--dry-run",
    "--config",
    join(dir, "agent.toml"),
  ], { cwd: dir, env: process.env, encoding: "utf8" });
  if (deploy.status !== 0) throw new Error(`deploy --dry-run failed: ${deploy.stderr}`);
  return join(dir, ".agentcli/bundle.tgz");
}

interface Replica {
  proc: ChildProcess;
  url: string;
}

async function startReplica(bundle: string, dir: string, env: NodeJS.ProcessEnv): Promise<Replica> {
  const port = await freePort("127.0.0.1");
  const proc = spawn(process.execPath, [
    ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ...(process.env.BENCH_REPLICA_NODE_FLAGS ? process.env.BENCH_REPLICA_NODE_FLAGS.split(" ") : []),
    ...(SERVER === "ceiling" ? [join(ROOT, "bench/ceiling-server.ts"), "--mode", "postgres", "--port", String(port)] : [
      join(ROOT, "bin/agentcli.js"),
      "serve",
      bundle,
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--graph",
      `bench=${GRAPH}`,
      ...(WORKERS ? ["--workers", WORKERS] : []),
    ]),
  ], { stdio: ["ignore", "ignore", process.env.BENCH_VERBOSE ? "inherit" : "ignore"], cwd: dir, env, detached: true });
  const url = `http://127.0.0.1:${port}`;
  await waitOk(url, performance.now(), proc);
  return { proc, url };
}

/**
 * The load balancer: HAProxy (round robin per request, HTTP keep-alive to the replicas) when
 * `--proxy haproxy`, or when it is on the PATH and `--proxy` is not given; else bench/proxy.ts,
 * the same in Node. Its CPU is reported on its own (the "proxy" column): on a machine of two
 * cores the balancer's work competes with the replicas' (with the Node proxy, 1-2 ms per run).
 */
async function startProxy(urls: string[]): Promise<{ url: string; proc: ChildProcess }> {
  if (PROXY === "haproxy") return startHaproxy(urls);
  const proc = spawn(process.execPath, [join(ROOT, "bench/proxy.ts"), ...urls.map((u) => new URL(u).port)], {
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once("line", resolve);
    proc.once("exit", (code) => reject(new Error(`proxy exited (${code})`)));
  });
  return { url: line.trim(), proc };
}

async function startHaproxy(urls: string[]): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort("127.0.0.1");
  const cfg = join(mkdtempSync(join(tmpdir(), "agentcli-bench-haproxy-")), "haproxy.cfg");
  writeFileSync(
    cfg,
    [
      "global",
      "  maxconn 4096",
      "  nbthread 1",
      "defaults",
      "  mode http",
      "  timeout connect 5s",
      "  timeout client 600s",
      "  timeout server 600s",
      "  option http-keep-alive",
      "frontend bench",
      `  bind 127.0.0.1:${port}`,
      "  default_backend replicas",
      "backend replicas",
      `  balance ${BALANCE}`,
      "  http-reuse always",
      ...urls.map((u, i) => `  server r${i} 127.0.0.1:${new URL(u).port}`),
      "",
    ].join("\n"),
  );
  const proc = spawn(HAPROXY!, ["-f", cfg, "-db"], { stdio: ["ignore", "ignore", "inherit"], detached: true });
  const url = `http://127.0.0.1:${port}`;
  await waitOk(url, performance.now(), proc);
  return { url, proc };
}

/** The SDK's client sends at most 4 requests at once unless told otherwise: the bench's clients are concurrent. */
const clientOf = (url: string) =>
  new Client({ apiUrl: url, apiKey: KEY, callerOptions: { maxRetries: 0, maxConcurrency: Infinity } });

const load = runLoad;

/**
 * A run created on `a` (it runs there: an idle replica claims the runs created on it), its
 * stream joined on `on` at once: milliseconds from the join request to its first event and
 * to the end of the stream.
 */
async function joinTimes(a: Client, on: Client, assistantId: string): Promise<{ first: number; end: number }> {
  const th = await a.threads.create();
  const run = await a.runs.create(th.thread_id, assistantId, { input, streamMode: ["values"] });
  const s = performance.now();
  let first = 0;
  let values = 0;
  for await (const e of on.runs.joinStream(th.thread_id, run.run_id, { streamMode: ["values"] })) {
    if (!first) first = performance.now() - s;
    if (e.event === "values") values++;
    if (e.event === "error") throw new Error(`joined run failed: ${JSON.stringify(e.data)}`);
  }
  if (values < 2) throw new Error(`joined stream had ${values} values events (expected the input and the answer)`);
  return { first, end: performance.now() - s };
}

interface LoadResult {
  mode: string;
  replicas: number;
  clients: number;
  runs: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU per run: the replicas' process trees, PostgreSQL's processes (all of them), the bench's clients + proxy + model. */
  cpuMsPerRun: number;
  pgCpuMsPerRun: number;
  /** Redis's server process (`redis-server`), in the Redis mode only (in the other, Redis serves nothing here). */
  redisCpuMsPerRun: number;
  harnessCpuMsPerRun: number;
  proxyCpuMsPerRun: number;
  /** Everything that serves the runs: replicas + PostgreSQL + Redis + proxy. */
  allCpuMsPerRun: number;
  /** Share of the machine's CPU time busy during the load (every process, other users' too), and per run. */
  machineBusy: number;
  machineBusyMsPerRun: number;
  loadavg: number;
}
interface JoinResult {
  mode: string;
  same: { first: number; end: number };
  cross: { first: number; end: number };
}

async function measure(
  mode: "postgres" | "redis",
  n: number,
  bundle: string,
  dir: string,
  model: string,
  modelProc: ChildProcess,
) {
  const { openSql } = await import("../core/storage/sql.ts");
  const schema = `agentcli_bench_replicas_${process.pid}_${mode}_${n}`;
  const admin = await openSql({ url: PG_URL, poolSize: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const sep = PG_URL.includes("?") ? "&" : "?";
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: "1",
    OPENAI_BASE_URL: model,
    OPENAI_API_KEY: "bench",
    PLATFORM_API_KEY: KEY,
    DATABASE_URL: `${PG_URL}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    // Behind the load balancer every client arrives from its address: the per-address bound is
    // off, as docs/security.md says for a balanced deployment (128 clients would meet it).
    AGENTCLI_MAX_CONNECTIONS_PER_CLIENT: "0",
  };
  if (mode === "redis") env.REDIS_URL = REDIS_URL;
  else delete env.REDIS_URL;
  const replicas: Replica[] = [];
  let proxy: { url: string; proc: ChildProcess } | null = null;
  const loads: LoadResult[] = [];
  let join: JoinResult | null = null;
  try {
    replicas.push(await startReplica(bundle, dir, env)); // the first one creates the schema's tables
    replicas.push(...await Promise.all(Array.from({ length: n - 1 }, () => startReplica(bundle, dir, env))));
    proxy = await startProxy(replicas.map((r) => r.url));
    const client = clientOf(proxy.url);
    const found = await client.assistants.search({ graphId: "bench", limit: 10 });
    if (found.length !== 1) throw new Error(`expected one assistant of graph "bench", found ${found.length}`);
    const assistantId = found[0]!.assistant_id;
    // Warm-up: every replica has loaded the graph, opened its connections and compiled its hot paths.
    await load(client, assistantId, 8 * n, 40 * n);
    await sleep(1000);
    for (const clients of CLIENTS) {
      const harness = () =>
        process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 + treeStats(modelProc.pid!).cpuMs;
      const proxyCpu = () => treeStats(proxy!.proc.pid!).cpuMs;
      const cpu0 = replicas.reduce((s, r) => s + treeStats(r.proc.pid!).cpuMs, 0);
      const redisCpu = () => (mode === "redis" ? cpuByPid("redis-server") : new Map<number, number>());
      const pg0 = cpuByPid("postgres"), rd0 = redisCpu(), h0 = harness(), p0 = proxyCpu(), m0 = machineCpu();
      const w0 = process.hrtime.bigint() / 1000n; // the profiles' clock (monotonic, microseconds)
      const r = await load(client, assistantId, clients, clients * RUNS_PER_CLIENT);
      if (process.env.BENCH_CPU_PROF) {
        process.stderr.write(`  load window (monotonic us): ${w0} ${process.hrtime.bigint() / 1000n}\n`);
      }
      const m1 = machineCpu(), h1 = harness(), p1 = proxyCpu(), pg1 = cpuByPid("postgres"), rd1 = redisCpu();
      const cpu1 = replicas.reduce((s, r) => s + treeStats(r.proc.pid!).cpuMs, 0);
      const serving = { replicas: cpu1 - cpu0, pg: cpuDelta(pg0, pg1), redis: cpuDelta(rd0, rd1), proxy: p1 - p0 };
      loads.push({
        mode,
        replicas: n,
        clients,
        ...r,
        cpuMsPerRun: serving.replicas / r.runs,
        pgCpuMsPerRun: serving.pg / r.runs,
        redisCpuMsPerRun: serving.redis / r.runs,
        harnessCpuMsPerRun: (h1 - h0) / r.runs,
        proxyCpuMsPerRun: serving.proxy / r.runs,
        allCpuMsPerRun: (serving.replicas + serving.pg + serving.redis + serving.proxy) / r.runs,
        machineBusy: (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total),
        machineBusyMsPerRun: ((m1.busy - m0.busy) * 10) / r.runs,
        loadavg: Number(loadavg()[0]!.toFixed(1)),
      });
      process.stderr.write(
        `  ${mode}, ${n} replica(s), ${clients} clients: ${r.rps.toFixed(1)} runs/s, p99 ${r.p99.toFixed(0)} ms\n`,
      );
      await sleep(500);
    }
    if (n >= 2 && SERVER === "serve") {
      const a = clientOf(replicas[0]!.url);
      const b = clientOf(replicas[1]!.url);
      const same: Array<{ first: number; end: number }> = [];
      const cross: Array<{ first: number; end: number }> = [];
      await joinTimes(a, b, assistantId); // warm-up of the join path on both replicas
      await joinTimes(a, a, assistantId);
      for (let i = 0; i < FIRST_EVENT_SAMPLES; i++) {
        // Alternated, so the machine's noise falls on both alike.
        same.push(await joinTimes(a, a, assistantId));
        cross.push(await joinTimes(a, b, assistantId));
      }
      const med = (xs: Array<{ first: number; end: number }>) => ({
        first: pct(xs.map((x) => x.first), 50),
        end: pct(xs.map((x) => x.end), 50),
      });
      join = { mode, same: med(same), cross: med(cross) };
    }
  } finally {
    if (proxy) await stopTree(proxy.proc);
    // SIGTERM and a grace: a replica hands back what it still holds, none is left running.
    await Promise.all(replicas.map((r) => stopTree(r.proc, 15_000)));
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await admin.close();
  }
  return { loads, join };
}

const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-replicas-"));
const model = await startModel(MODEL_MS);
const loads: LoadResult[] = [];
const joins: JoinResult[] = [];
const loadStart = loadavg().map((l) => Number(l.toFixed(1)));
try {
  const bundle = buildBundle(dir);
  for (const mode of MODES) {
    for (const n of REPLICAS) {
      process.stderr.write(
        `measuring ${n} replica(s), signals over ${mode === "redis" ? "Redis" : "PostgreSQL LISTEN/NOTIFY"}...\n`,
      );
      const r = await measure(mode, n, bundle, dir, model.url, model.proc);
      loads.push(...r.loads);
      if (r.join) joins.push(r.join);
    }
  }
} finally {
  model.proc.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}

const lo = Math.min(...REPLICAS), hi = Math.max(...REPLICAS);
const scaling = MODES.flatMap((mode) =>
  CLIENTS.map((clients) => {
    const one = loads.find((l) => l.mode === mode && l.replicas === lo && l.clients === clients);
    const many = loads.find((l) => l.mode === mode && l.replicas === hi && l.clients === clients);
    return {
      mode,
      clients,
      ratio: one && many && lo !== hi ? many.rps / one.rps : null,
      /** CPU per run of everything serving (replicas, PostgreSQL, Redis, proxy), hi replicas over lo: 1 means no cost to scale out. */
      cpuRatio: one && many && lo !== hi ? many.allCpuMsPerRun / one.allCpuMsPerRun : null,
      p99: many?.p99 ?? null,
    };
  })
);
const loadEnd = loadavg().map((l) => Number(l.toFixed(1)));
const workers = WORKERS ? Number(WORKERS) : `default (4 per CPU: ${Math.min(64, Math.max(4, 4 * cpus().length))})`;
if (args.includes("--json")) {
  console.log(JSON.stringify(
    {
      date: new Date().toISOString(),
      cpus: cpus().length,
      loadavg: { start: loadStart, end: loadEnd },
      node: process.versions.node,
      modelMs: MODEL_MS,
      workers,
      runsPerClient: RUNS_PER_CLIENT,
      proxy: PROXY,
      balance: BALANCE,
      server: SERVER,
      loads,
      joins,
      ratios: {
        replicas: scaling,
        crossVsSameFirstEvent: joins.map((j) => ({ mode: j.mode, ratio: j.cross.first / j.same.first })),
      },
    },
    null,
    2,
  ));
} else {
  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const signals = (m: string) => (m === "redis" ? "Redis" : "LISTEN/NOTIFY");
  console.log(
    `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${cpus().length} x ${
      cpus()[0]?.model ?? "cpu"
    }, load average ${loadStart.join(" ")} at the start, ${
      loadEnd.join(" ")
    } at the end, Node ${process.versions.node}`,
  );
  console.log(
    `${
      SERVER === "ceiling"
        ? "replicas: bench/ceiling-server.ts --mode postgres (agentcli's storage alone, no worker limit)"
        : "replicas: agentcli serve"
    }; model answers after ${MODEL_MS} ms; workers per replica: ${
      SERVER === "ceiling" ? "unbounded" : workers
    }; ${RUNS_PER_CLIENT} runs per client; load balancer: ${
      PROXY === "haproxy" ? `HAProxy (${BALANCE})` : "bench/proxy.ts (Node)"
    }`,
  );
  console.log(
    "\nCPU per run: of the replicas, of PostgreSQL (all its processes), of Redis (in the Redis mode), of the load balancer, of all four (what serves the runs), of the bench (clients, model), of the whole machine (other users' work included).",
  );
  console.log(
    "| signals | replicas | clients | runs/s | p50 | p99 | CPU: replicas | PostgreSQL | Redis | proxy | all serving | bench | machine | machine busy | load |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const l of loads) {
    console.log(
      `| ${signals(l.mode)} | ${l.replicas} | ${l.clients} | ${f(l.rps)} | ${f(l.p50)} ms | ${f(l.p99)} ms | ${
        f(l.cpuMsPerRun)
      } ms | ${f(l.pgCpuMsPerRun)} ms | ${f(l.redisCpuMsPerRun)} ms | ${f(l.proxyCpuMsPerRun)} ms | ${
        f(l.allCpuMsPerRun)
      } ms | ${f(l.harnessCpuMsPerRun)} ms | ${f(l.machineBusyMsPerRun)} ms | ${
        (l.machineBusy * 100).toFixed(0)
      }% | ${l.loadavg} |`,
    );
  }
  if (lo !== hi) {
    console.log(
      `\n| signals | clients | runs/s, ${hi} vs ${lo} replica(s) | CPU per run of all serving, ${hi} vs ${lo} | p99 at ${hi} |\n|---|---:|---:|---:|---:|`,
    );
    const x = (n: number | null) => (n === null ? "-" : `${n.toFixed(2)}x`);
    for (const s of scaling) {
      console.log(
        `| ${signals(s.mode)} | ${s.clients} | ${x(s.ratio)} | ${x(s.cpuRatio)} | ${
          s.p99 === null ? "-" : `${f(s.p99)} ms`
        } |`,
      );
    }
  }
  if (joins.length) {
    console.log(
      `\nA run created on replica A, its stream joined on A (same) or on B (cross), medians of ${FIRST_EVENT_SAMPLES}:`,
    );
    console.log(
      "| signals | first event, same | first event, cross | ratio cross/same | stream end, same | stream end, cross |\n|---|---:|---:|---:|---:|---:|",
    );
    for (const j of joins) {
      console.log(
        `| ${signals(j.mode)} | ${f(j.same.first)} ms | ${f(j.cross.first)} ms | ${
          (j.cross.first / j.same.first).toFixed(2)
        }x | ${f(j.same.end)} ms | ${f(j.cross.end)} ms |`,
      );
    }
  }
}
