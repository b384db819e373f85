/**
 * How far this machine lets a LangGraph.js agent server go under `npm run bench`'s load,
 * beside the peer and agentcli, in one process tree. bench/ceiling-server.ts answers the same
 * two requests with the bench graph invoked in process behind bare `node:http` (no queue,
 * streaming, auth or validation) in four versions: no storage at all (one process, and one per
 * CPU with `node:cluster`), LangGraph's in-memory checkpointer, and agentcli's own storage on
 * PGlite alone (the three statements `agentcli dev` makes per run). Then `langgraph-cli dev`
 * and `agentcli dev`. Same model server, same clients (`@langchain/langgraph-sdk`,
 * `threads.create` + `runs.wait`). Prints runs/s, each one's ratio to the peer, p50/p99, and
 * CPU milliseconds per run of the server, the model server, the clients (this process) and
 * the whole machine (/proc/stat: everyone's).
 *
 *   npm run bench:ceiling -- [--runs 400] [--clients 32] [--rounds 1] [--json]
 *
 * Issue 19 asks for 5x the peer's runs/s at 32 clients with durable storage, and a p50 of at
 * most 10 ms at 1 client: a server that does less than agentcli bounds what agentcli can reach.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import {
  machineCpu,
  ROOT,
  runLoad,
  startAgentcliDev,
  startModel,
  startPeer,
  stopTree,
  treeStats,
  waitOk,
} from "./children.ts";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS = Number(arg("--runs") ?? 400);
const CLIENTS = Number(arg("--clients") ?? 32);
const ROUNDS = Number(arg("--rounds") ?? 1);
const CPUS = cpus().length;

function startCeiling(port: number, mode: "none" | "memory" | "durable", processes = 1): ChildProcess {
  return spawn(process.execPath, [
    join(ROOT, "bench/ceiling-server.ts"),
    "--port",
    String(port),
    "--mode",
    mode,
    "--processes",
    String(processes),
  ], {
    stdio: ["ignore", "pipe", "inherit"],
    env: process.env,
    detached: true,
  });
}

interface Target {
  name: string;
  start(port: number, dir: string, env: NodeJS.ProcessEnv): ChildProcess;
}
const targets: Target[] = [
  { name: "langgraph-cli dev (the peer)", start: (port, dir, env) => startPeer(port, dir, env) },
  { name: "no storage, 1 process", start: (port) => startCeiling(port, "none") },
  { name: `no storage, ${CPUS} processes`, start: (port) => startCeiling(port, "none", CPUS) },
  { name: "checkpoints in memory (MemorySaver)", start: (port) => startCeiling(port, "memory") },
  { name: "agentcli's storage alone (PGlite, 3 statements)", start: (port) => startCeiling(port, "durable") },
  {
    name: "agentcli dev",
    start: (port, dir, env) => startAgentcliDev(port, dir, env, ["--graph", `bench=${join(ROOT, "bench/graph.ts")}`]),
  },
];

const model = await startModel();
process.env.OPENAI_BASE_URL = model.url;
process.env.OPENAI_API_KEY = "bench";
const env = { ...process.env, NO_COLOR: "1" };
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

type Row = {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  server: number;
  model: number;
  clients: number;
  machine: number;
  busy: number;
};
const rows: Row[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const dir = mkdtempSync(join(tmpdir(), "agentcli-ceiling-"));
      const port = await freePort("127.0.0.1");
      const proc = t.start(port, dir, env);
      try {
        const url = `http://127.0.0.1:${port}`;
        if (proc.stdout) await new Promise((r) => createInterface({ input: proc.stdout! }).once("line", r));
        await waitOk(url, performance.now(), proc);
        const client = new Client({
          apiUrl: url,
          apiKey: null,
          callerOptions: { maxRetries: 0, maxConcurrency: Infinity },
        });
        const assistantId = !t.name.startsWith("agentcli dev") && !t.name.startsWith("langgraph")
          ? "bench"
          : (await client.assistants.search({ graphId: "bench", limit: 1 }))[0]!.assistant_id;
        await runLoad(client, assistantId, CLIENTS, Math.max(CLIENTS * 4, 100)); // warm-up: modules, JIT, connections
        const s0 = treeStats(proc.pid!).cpuMs, m0 = treeStats(model.proc.pid!).cpuMs, c0 = cpuNow(), k0 = machineCpu();
        const r = await runLoad(client, assistantId, CLIENTS, RUNS);
        const s1 = treeStats(proc.pid!).cpuMs, m1 = treeStats(model.proc.pid!).cpuMs, c1 = cpuNow(), k1 = machineCpu();
        rows.push({
          name: t.name,
          rps: r.rps,
          p50: r.p50,
          p99: r.p99,
          server: (s1 - s0) / RUNS,
          model: (m1 - m0) / RUNS,
          clients: (c1 - c0) / RUNS,
          machine: ((k1.busy - k0.busy) * 10) / RUNS,
          busy: (k1.busy - k0.busy) / (k1.total - k0.total),
        });
        process.stderr.write(`${t.name}: ${r.rps.toFixed(1)} runs/s\n`);
      } finally {
        await stopTree(proc, 5000);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
} finally {
  model.proc.kill("SIGTERM");
}

const peerRps = (round: number) => rows[round * targets.length]!.rps;
if (args.includes("--json")) {
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        cpus: CPUS,
        loadavg: loadavg(),
        node: process.versions.node,
        clients: CLIENTS,
        runs: RUNS,
        rows,
      },
      null,
      2,
    ),
  );
} else {
  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  console.log(
    `${new Date().toISOString().slice(0, 16)}Z, ${CPUS} x ${cpus()[0]?.model ?? "cpu"}, load average ${
      loadavg().map((l) => l.toFixed(1)).join(" ")
    }, Node ${process.versions.node}, ${RUNS} runs at ${CLIENTS} clients`,
  );
  console.log(
    "| server | runs/s | x peer | p50 | p99 | CPU per run: server | model | clients | machine | machine busy |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  rows.forEach((r, i) => {
    console.log(
      `| ${r.name} | ${f(r.rps)} | ${(r.rps / peerRps(Math.floor(i / targets.length))).toFixed(2)}x | ${
        f(r.p50)
      } ms | ${f(r.p99)} ms | ${r.server.toFixed(2)} ms | ${r.model.toFixed(2)} ms | ${r.clients.toFixed(2)} ms | ${
        r.machine.toFixed(2)
      } ms | ${(r.busy * 100).toFixed(0)}% |`,
    );
  });
}
