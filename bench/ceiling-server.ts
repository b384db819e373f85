/**
 * The ceiling of any LangGraph.js agent server on this machine: the two endpoints the bench's
 * load uses (`POST /threads`, `POST /threads/{id}/runs/wait`), answering `threads.create` with a
 * new id and `runs.wait` by invoking bench/graph.ts in process: no storage, no checkpointer, no
 * queue, no streaming, no auth, no validation. Nothing a real server must do beyond LangGraph.js
 * itself and HTTP, so a real server's runs/s under the same load is below this one's.
 *
 *   node bench/ceiling-server.ts --port <port> [--processes <n>]   # n > 1: node:cluster workers sharing the port
 *
 * Run by bench/ceiling.ts; prints "ready" on stdout once every process listens.
 */
import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const port = Number(arg("--port"));
const processes = Number(arg("--processes") ?? 1);

if (processes > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < processes; i++) cluster.fork().on("listening", () => ++listening === processes && process.stdout.write("ready\n"));
  process.on("SIGTERM", () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
    process.exit(0);
  });
} else {
  const { graph } = await import("./graph.ts");
  const wire = (m: { getType(): string; content: unknown; id?: string }) => ({ type: m.getType(), content: m.content, id: m.id });
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
        if (req.method === "POST" && req.url === "/threads") {
          const now = new Date().toISOString();
          return send(200, { thread_id: randomUUID(), created_at: now, updated_at: now, metadata: {}, status: "idle", values: null, interrupts: {} });
        }
        if (req.method === "POST" && /^\/threads\/[^/]+\/runs\/wait$/.test(req.url ?? "")) {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: { messages: Array<{ role: string; content: string }> } };
          const out = await graph.invoke(body.input);
          return send(200, { messages: out.messages.map(wire) });
        }
        send(404, { detail: "not found" });
      } catch (err) {
        send(500, { detail: (err as Error).message });
      }
    });
  }).listen(port, "127.0.0.1", () => processes === 1 && process.stdout.write("ready\n"));
  process.on("SIGTERM", () => process.exit(0));
}
