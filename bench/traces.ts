/**
 * What usage and run traces cost (issue 35 item 5; goal: under 5% more CPU per run). An agent
 * server (embedded PGlite in memory, or PostgreSQL with `--pg`) serves a LangChain agent whose
 * every run makes two model calls and one tool call (`ChatOpenAI` against the scripted model
 * server), driven by an SDK client. The configurations:
 * - `off`: usage and traces off (`usage: false`, `traceRetentionSeconds: 0`);
 * - `usage`: usage on, traces off (usage read from the run's stream, no callback handler);
 * - `traces`: both on (the defaults).
 * Default: `usage` against `traces`; `--usage`: all three.
 *
 * Method (./interleave.ts): one server per configuration, each in a process of its own
 * (`--child`, driven over IPC; the SDK client and the scripted model server stay in this
 * process), so no server shares a heap, a garbage collector or JIT feedback with another, as in
 * production, where a server has one configuration. Runs are interleaved one at a time in a
 * shuffled order each cycle (a slow drift of the machine or a timer lands on each alike); each
 * run's CPU time is the server process's (`process.cpuUsage()` of the child: all its threads)
 * from its previous run's read to this run's, read a short quiet wait (`--settle` ms) after the
 * answer: the sum over runs is all the server spent, garbage collection, compilation on V8's
 * threads, timers and work after a run's answer included, each with its own configuration.
 * `--warmup` cycles first, then `--runs` cycles. A configuration's
 * figure is its mean CPU per run; the ratio to the first has a 95% interval (a block bootstrap
 * over cycles), with the ratios of 5 consecutive parts beside it. `--one-process`: all the
 * servers in this process instead, a run's CPU time then the whole process's (client and model
 * server included); its A/A interval is wider (bench/README.md). `--raw FILE`: the per-run times.
 * `--aa`: every configuration replaced by `off` (an A/A test: the bench's own check; the
 * ratios must be 1.00x within their intervals).
 *
 * `--only off|usage|traces`: one server in this process, `--runs` runs one after another, no
 * warm-up, for counting instructions per configuration under valgrind's callgrind; `--runs 0`
 * starts it and runs nothing (the startup to subtract).
 *
 *   node bench/traces.ts [--runs 1000] [--warmup 50] [--settle 5] [--pg] [--usage] [--aa]
 *                        [--one-process] [--raw FILE] [--only off|usage|traces]
 */
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { tool } from "@langchain/core/tools";
import { Client } from "@langchain/langgraph-sdk";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { z } from "zod";
import { createAgentServer } from "../core/server/app.ts";
import { listen } from "../core/server/host/node.ts";
import { silentLog } from "../core/kernel/log.ts";
import { openSql } from "../core/storage/sql.ts";
import { startModelServer } from "../tests/fixtures/model-server/server.ts";
import { interleave, mean, partRatios, ratioInterval, type Runner } from "./interleave.ts";

const CONFIGS = {
  off: { name: "usage and traces off", retention: 0, usage: false },
  usage: { name: "usage on, traces off", retention: 0, usage: true },
  traces: { name: "usage and traces on (the defaults)", retention: 604_800, usage: true },
} as const;
type Key = keyof typeof CONFIGS;

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const count = (name: string, fallback: number) => {
  const n = Number(arg(name) ?? fallback);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, not "${arg(name)}"`);
  return n;
};
const RUNS = count("--runs", 1000);
const WARMUP = count("--warmup", 50);
/** Quiet time after each run before its CPU time is read (the server's work after the answer). */
const SETTLE_MS = count("--settle", 5);
const PG = args.includes("--pg");
const ONLY = arg("--only") ?? arg("--child");
if (ONLY !== undefined && !(ONLY in CONFIGS)) {
  throw new Error(`--only must be off, usage or traces, not "${ONLY}"`);
}

/** The client side: the scripted model server, and one run of the agent on a server. */
async function startHarness() {
  const models = await startModelServer();
  return {
    modelsUrl: models.openaiBaseUrl,
    async run(client: Client, i: number) {
      models.script({ toolCalls: [{ name: "lookup", args: { q: `q${i}` } }] }, { text: "done" });
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: `question ${i}` }] },
      });
      models.requests.length = 0;
      if (SETTLE_MS > 0) await new Promise((r) => setTimeout(r, SETTLE_MS));
    },
    close: () => models.close(),
  };
}
type Harness = Awaited<ReturnType<typeof startHarness>>;

/** One agent server of a configuration in this process, its agent's model at `modelsUrl`. */
async function agentServer(key: Key, opts: { tag: string; modelsUrl: string }) {
  const lookup = tool(async ({ q }) => `result for ${q}`, {
    name: "lookup",
    description: "Looks something up",
    schema: z.object({ q: z.string() }),
  });
  const graph = createAgent({
    model: new ChatOpenAI({ model: "gpt-test", apiKey: "bench", configuration: { baseURL: opts.modelsUrl } }),
    tools: [lookup],
  });
  const config = CONFIGS[key];
  const s = await createAgentServer({
    graphs: { agent: async () => graph },
    log: silentLog,
    storage: PG ? await pgSchema(`${process.pid}_${opts.tag}`) : {},
    ttl: { traceRetentionSeconds: config.retention },
    ...(config.usage ? {} : { usage: false as const }),
  });
  const l = await listen(s, { port: 0, host: "127.0.0.1" });
  return { url: `http://127.0.0.1:${l.port}`, close: async () => (await l.close(), await s.close()) };
}

/** A new schema in the test database, the server's storage under `--pg`. */
async function pgSchema(tag: string) {
  const base = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = `agentcli_bench_traces_${tag}`;
  const admin = await openSql({ url: base });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  return { url: `${base}?options=${encodeURIComponent(`-c search_path=${schema}`)}` };
}

const cpuMs = (used: NodeJS.CpuUsage) => (used.user + used.system) / 1000;

/** A configuration's server in this process: a run's CPU time is the whole process's (client and model server too). */
async function localRunner(key: Key, opts: { tag: string; harness: Harness }): Promise<Runner> {
  const server = await agentServer(key, { tag: opts.tag, modelsUrl: opts.harness.modelsUrl });
  const client = new Client({ apiUrl: server.url, apiKey: null });
  return {
    name: CONFIGS[key].name,
    async once(i) {
      const before = process.cpuUsage();
      await opts.harness.run(client, i);
      return cpuMs(process.cpuUsage(before));
    },
    close: server.close,
  };
}

type Reply = { url: string } | { ms: number; during: number } | { marked: true };

/**
 * A configuration's server in a child process of its own (`--child`), the client and model
 * server in this one: a run's CPU time is the child's, the server's alone.
 */
async function childRunner(key: Key, opts: { tag: string; harness: Harness }): Promise<Runner> {
  const flags = ["--child", key, "--tag", opts.tag, "--models", opts.harness.modelsUrl, ...(PG ? ["--pg"] : [])];
  const child = fork(process.argv[1]!, flags, {
    execArgv: process.execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let waiting: ((m: Reply | Error) => void) | null = null;
  child.on("message", (m: Reply) => waiting?.(m));
  child.on("exit", (code) => waiting?.(new Error(`the "${key}" server's process exited (${code})`)));
  const ask = <T extends Reply>(m: object) =>
    new Promise<T>((resolve, reject) => {
      waiting = (r) => (r instanceof Error ? reject(r) : resolve(r as T));
      child.send(m);
    });
  const client = new Client({ apiUrl: (await ask<{ url: string }>({ start: true })).url, apiKey: null });
  const during: number[] = [];
  return {
    name: CONFIGS[key].name,
    async once(i) {
      await ask({ mark: true });
      await opts.harness.run(client, i);
      const read = await ask<{ ms: number; during: number }>({ read: true });
      during.push(read.during);
      return read.ms;
    },
    during: async () => mean(during.slice(-RUNS)),
    async close() {
      child.removeAllListeners("exit");
      const done = new Promise((r) => child.once("exit", r));
      child.send({ close: true });
      await done;
    },
  };
}

/**
 * The child's side of {@link childRunner}: one server. A run's CPU time is all the process
 * spent from the previous run's read to this one's: its trailing work (garbage collection and
 * compilation on V8's threads, writes after the answer) and its timers are counted, with its
 * own configuration; what fell between its request and its read is told apart (`during`).
 */
function serveChild(key: Key) {
  let server: Awaited<ReturnType<typeof agentServer>> | null = null;
  let last = process.cpuUsage(), mark = last;
  const ms = (from: NodeJS.CpuUsage, to: NodeJS.CpuUsage) =>
    cpuMs({ user: to.user - from.user, system: to.system - from.system });
  process.on("message", async (m: { start?: true; mark?: true; read?: true; close?: true }) => {
    if (m.mark) (mark = process.cpuUsage()), process.send!({ marked: true });
    else if (m.read) {
      const now = process.cpuUsage();
      process.send!({ ms: ms(last, now), during: ms(mark, now) });
      last = now;
    } else if (m.start) {
      server = await agentServer(key, { tag: arg("--tag") ?? key, modelsUrl: arg("--models")! });
      (last = process.cpuUsage()), process.send!({ url: server.url });
    } else if (m.close) await server?.close(), process.exit(0);
  });
}

if (arg("--child")) {
  serveChild(ONLY as Key);
} else if (ONLY) {
  const harness = await startHarness();
  const runner = await localRunner(ONLY as Key, { tag: ONLY, harness });
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) ms.push(await runner.once(i));
  await runner.close();
  await harness.close();
  if (RUNS > 0) console.log(`${runner.name}: ${mean(ms).toFixed(2)} ms of CPU per run (mean of ${RUNS})`);
} else {
  await compare();
}

async function compare() {
  const ONE = args.includes("--one-process");
  const keys: Key[] = args.includes("--usage") ? ["off", "usage", "traces"] : ["usage", "traces"];
  const chosen: Key[] = args.includes("--aa") ? keys.map(() => "off") : keys;
  const harness = await startHarness();
  const runners: Runner[] = [];
  for (const [i, key] of chosen.entries()) {
    const r = await (ONE ? localRunner : childRunner)(key, { tag: `${key}_${i}`, harness });
    runners.push(args.includes("--aa") ? { ...r, name: `${r.name} (${"ABCD"[i]})` } : r);
  }
  const load = [loadavg()[0]!];
  const started = performance.now();
  const cycles = await interleave(runners, {
    runs: RUNS,
    warmup: WARMUP,
    onCycle: (n) => n % 100 === 0 && load.push(loadavg()[0]!),
  });
  const wall = (performance.now() - started) / 1000;
  const during = await Promise.all(runners.map((r) => r.during?.()));
  for (const r of runners) await r.close();
  await harness.close();
  const per = runners.map((_, i) => cycles.map((row) => row[i]!));
  if (arg("--raw")) writeFileSync(arg("--raw")!, JSON.stringify({ names: runners.map((r) => r.name), cycles }));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `${chosen.length} servers ${ONE ? "in one process" : "in a process each"} (${PG ? "PostgreSQL" : "PGlite"}), ` +
      `${WARMUP} + ${RUNS} runs each, interleaved; ${wall.toFixed(0)} s; ` +
      `load average (1 min) ${Math.min(...load).toFixed(2)}-${Math.max(...load).toFixed(2)}`,
  );
  console.log("");
  console.log("| configuration | CPU per run (mean) | median run | vs the first (95% interval) | in 5 parts |");
  console.log("|---|---:|---:|---:|---|");
  for (const [i, r] of runners.entries()) {
    const { ratio, lo, hi } = ratioInterval(per[i]!, per[0]!);
    const parts = partRatios(per[i]!, per[0]!, 5).map((x) => x.toFixed(3)).join(" ");
    const vs = i === 0 ? "1" : `${ratio.toFixed(3)}x (${lo.toFixed(3)}-${hi.toFixed(3)})`;
    console.log(
      `| ${r.name} | ${mean(per[i]!).toFixed(2)} ms | ${median(per[i]!).toFixed(2)} ms | ${vs} | ${i ? parts : ""} |`,
    );
  }
  if (during[0] !== undefined) {
    const each = during.map((ms, i) => `${ms!.toFixed(2)} ms (${ordinal(i)})`).join(", ");
    console.log(`\nOf which between a run's request and its answer (mean): ${each}`);
  }
}

function ordinal(i: number) {
  return ["first", "second", "third", "fourth"][i] ?? `#${i + 1}`;
}
