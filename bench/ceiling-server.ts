/**
 * Lower bounds of a LangGraph.js agent server on this machine: the two endpoints the bench's
 * load uses (`POST /threads`, `POST /threads/{id}/runs/wait`), answering `threads.create` with a
 * new id and `runs.wait` by invoking bench/graph.ts in process. No queue, no streaming, no auth,
 * no validation, no assistants; by `--mode`:
 * - `none`: no storage, no checkpointer: LangGraph.js and HTTP only;
 * - `memory`: LangGraph's `MemorySaver` (checkpoints in memory, nothing durable);
 * - `durable`: agentcli's own storage on the embedded engine (PGlite in a new folder): the
 *   thread's insert, the run's insert (claimed), the graph on agentcli's checkpointer, and the
 *   run's end written with its checkpoints: the three statements `agentcli dev` makes per run
 *   of this load, and nothing else of the server;
 * - `postgres`: the same on PostgreSQL (`DATABASE_URL`): the statements `agentcli serve` makes
 *   per run when its run starts where it was created (bench/replicas.ts `--server ceiling`
 *   runs several of these as its replicas, so a thread may be created on one and run on another).
 * A real server's runs/s and latency under the same load are bounded by these.
 *
 *   node bench/ceiling-server.ts --port <port> [--mode none|memory|durable|postgres] [--processes <n>]   # n > 1: node:cluster workers sharing the port
 *
 * Run by bench/ceiling.ts; prints "ready" on stdout once every process listens.
 */
import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const port = Number(arg("--port"));
const processes = Number(arg("--processes") ?? 1);
const mode = arg("--mode") ?? "none";
if (!["none", "memory", "durable", "postgres"].includes(mode)) {
  throw new Error(`--mode: none, memory, durable or postgres, not "${mode}"`);
}
if (mode === "postgres" && !process.env.DATABASE_URL) throw new Error("--mode postgres: set DATABASE_URL");

type Msg = { getType(): string; content: unknown; id?: string };
type Invoke = (threadId: string, input: unknown) => Promise<{ messages: Msg[] }>;
type Handlers = { createThread(id: string): Promise<void>; wait: Invoke; close(): Promise<void> };

async function handlers(): Promise<Handlers> {
  const { graph } = await import("./graph.ts");
  if (mode === "none") {
    return {
      createThread: async () => {},
      wait: (_t, input) => graph.invoke(input as never),
      close: async () => {},
    };
  }
  if (mode === "memory") {
    const { MemorySaver } = await import("@langchain/langgraph");
    graph.checkpointer = new MemorySaver();
    return {
      createThread: async () => {},
      wait: (thread_id, input) => graph.invoke(input as never, { configurable: { thread_id } }),
      close: async () => {},
    };
  }
  const { openStorage } = await import("../core/storage/storage.ts");
  const dir = mode === "durable" ? mkdtempSync(join(tmpdir(), "agentcli-ceiling-db-")) : null;
  const storage = await openStorage(dir ? { dataDir: dir } : { url: process.env.DATABASE_URL });
  graph.checkpointer = storage.checkpointer;
  return {
    async createThread(id) {
      await storage.threads.create({ thread_id: id, metadata: {} });
      if (dir) storage.checkpointer.markEmpty(id);
    },
    async wait(threadId, input) {
      const runId = randomUUID();
      const { run, threadEmpty } = await storage.runs.createOnThread(
        {
          run_id: runId,
          thread_id: threadId,
          assistant_id: "bench",
          metadata: {},
          kwargs: { input } as never,
          multitask_strategy: "enqueue",
        },
        { owner: null, claim: true, threadPatch: {} },
      );
      if (run?.status !== "running") throw new Error("the run was not inserted claimed");
      if (threadEmpty) storage.checkpointer.expectEmpty(runId, threadId);
      const out = await graph.invoke(input as never, { configurable: { thread_id: threadId, run_id: runId } });
      const values = { messages: out.messages.map(wire) };
      await storage.checkpointer.flushWith((batch) =>
        storage.runs.complete({
          run,
          end: { status: "success", values, interrupts: {}, threadStatus: "idle", error: null },
          events: [],
          checkpoints: batch,
        })
      );
      return out;
    },
    async close() {
      await storage.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

const wire = (m: Msg) => ({ type: m.getType(), content: m.content, id: m.id });

if (processes > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < processes; i++) {
    cluster.fork().on("listening", () => ++listening === processes && process.stdout.write("ready\n"));
  }
  process.on("SIGTERM", () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
    process.exit(0);
  });
} else {
  const h = await handlers();
  createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const send = (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
      };
      try {
        if (req.method === "GET" && req.url === "/ok") return send(200, { ok: true });
        // The one assistant the load runs (bench/replicas.ts looks it up).
        if (req.method === "POST" && req.url === "/assistants/search") {
          return send(200, [{ assistant_id: "bench", graph_id: "bench", config: {}, metadata: {}, name: "bench" }]);
        }
        if (req.method === "POST" && req.url === "/threads") {
          const id = randomUUID();
          await h.createThread(id);
          const now = new Date().toISOString();
          return send(200, {
            thread_id: id,
            created_at: now,
            updated_at: now,
            metadata: {},
            status: "idle",
            values: null,
            interrupts: {},
          });
        }
        const m = /^\/threads\/([^/]+)\/runs\/wait$/.exec(req.url ?? "");
        if (req.method === "POST" && m) {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: unknown };
          const out = await h.wait(m[1]!, body.input);
          return send(200, { messages: out.messages.map(wire) });
        }
        send(404, { detail: "not found" });
      } catch (err) {
        send(500, { detail: (err as Error).message });
      }
    });
  }).listen(port, "127.0.0.1", () => processes === 1 && process.stdout.write("ready\n"));
  process.on("SIGTERM", () => void h.close().finally(() => process.exit(0)));
}
