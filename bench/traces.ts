/**
 * The cost of run traces kept locally (issue 35 item 5): one agent server in this process
 * (embedded PGlite in memory, or PostgreSQL with `--pg`), serving a LangChain agent whose
 * every run makes two model calls and one tool call (`ChatOpenAI` against the scripted model
 * server), driven by an SDK client; rounds alternate traces on (the default retention) and
 * off (`traceRetentionSeconds: 0`) on two servers, and the process's CPU time per run
 * (`process.cpuUsage()`, client and model server included: the same in both) is compared.
 * `--usage`: three servers in one run: usage and traces off (`usage: false`), usage on with
 * traces off (usage read from the run's stream, no callback handler), and both on (the
 * defaults: the trace recorder's handler counts the usage); issue 35's goal: under 5% more
 * CPU per run.
 *
 * `--only off|usage|traces`: one server only (both off, usage on with traces off, or both on),
 * for counting instructions per configuration (one process each) under valgrind's callgrind;
 * `--runs 0` starts it and runs nothing (the startup to subtract).
 *
 *   node bench/traces.ts [--runs 100] [--rounds 4] [--pg] [--usage] [--only off|usage|traces]
 */
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

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS = arg("--runs") === "0" ? 0 : Number(arg("--runs") ?? 100) || 100;
const ROUNDS = Number(arg("--rounds") ?? 4) || 4;
const PG = args.includes("--pg");
const USAGE = args.includes("--usage");
const ONLY = arg("--only");
if (ONLY !== undefined && !["off", "usage", "traces"].includes(ONLY)) {
  throw new Error(`--only must be off, usage or traces, not "${ONLY}"`);
}

const models = await startModelServer();
const lookup = tool(async ({ q }) => `result for ${q}`, {
  name: "lookup",
  description: "Looks something up",
  schema: z.object({ q: z.string() }),
});
const graph = createAgent({
  model: new ChatOpenAI({ model: "gpt-test", apiKey: "bench", configuration: { baseURL: models.openaiBaseUrl } }),
  tools: [lookup],
});

async function server(traceRetentionSeconds: number, usage = true) {
  let storage = {};
  if (PG) {
    const base = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `agentcli_bench_traces_${process.pid}_${traceRetentionSeconds}`;
    const admin = await openSql({ url: base });
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.close();
    storage = { url: `${base}?options=${encodeURIComponent(`-c search_path=${schema}`)}` };
  }
  const s = await createAgentServer({
    graphs: { agent: async () => graph },
    log: silentLog,
    storage,
    ttl: { traceRetentionSeconds },
    ...(usage ? {} : { usage: false as const }),
  });
  const l = await listen(s, { port: 0, host: "127.0.0.1" });
  const client = new Client({ apiUrl: `http://127.0.0.1:${l.port}`, apiKey: null });
  return { client, close: async () => (await l.close(), await s.close()) };
}

async function round(client: Client, runs: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    models.script({ toolCalls: [{ name: "lookup", args: { q: `q${i}` } }] }, { text: "done" });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: `question ${i}` }] },
    });
  }
  const used = process.cpuUsage(before);
  models.requests.length = 0;
  return (used.user + used.system) / 1000 / runs;
}

// Each configuration one server; rounds alternate between them.
const configs = ONLY
  ? [
    ONLY === "off"
      ? { name: "usage and traces off", s: await server(0, false) }
      : ONLY === "usage"
      ? { name: "usage on, traces off", s: await server(0) }
      : { name: "usage and traces on", s: await server(604_800) },
  ]
  : USAGE
  ? [
    {
      name: "usage and traces off (AGENTCLI_USAGE=off, AGENTCLI_TRACE_RETENTION_SECONDS=0)",
      s: await server(0, false),
    },
    { name: "usage on, traces off (AGENTCLI_TRACE_RETENTION_SECONDS=0)", s: await server(0) },
    { name: "usage and traces on (the defaults)", s: await server(604_800) },
  ]
  : [
    { name: "traces off (AGENTCLI_TRACE_RETENTION_SECONDS=0)", s: await server(0) },
    { name: "traces on (default)", s: await server(604_800) },
  ];
// Under --only, no warm-up: the runs counted are exactly --runs (see the module comment).
if (RUNS > 0 && !ONLY) { for (const c of configs) await round(c.s.client, 10); }
const perRun: number[][] = configs.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (const [i, c] of configs.entries()) perRun[i]!.push(await round(c.s.client, RUNS));
}
for (const c of configs) await c.s.close();
await models.close();
if (RUNS === 0) process.exit(0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const medians = perRun.map(median);
console.log(
  `| CPU per run (median of ${ROUNDS} rounds of ${RUNS} runs, ${PG ? "PostgreSQL" : "PGlite"}) | ms | vs the first |`,
);
console.log("|---|---:|---:|");
for (const [i, c] of configs.entries()) {
  console.log(`| ${c.name} | ${medians[i]!.toFixed(2)} | ${(medians[i]! / medians[0]!).toFixed(3)}x |`);
}
