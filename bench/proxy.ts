/**
 * The replica benchmark's load balancer: a round-robin HTTP proxy in front of `serve`
 * replicas, one request to the next replica (as an HTTP load balancer does; a Kubernetes
 * Service balances connections instead). Responses, SSE streams included, are piped through
 * as they come. Run as a child process by `bench/replicas.ts`, so its CPU is not the bench
 * clients'; prints its URL on the first line of stdout.
 *
 *   node bench/proxy.ts <port> [<port>...]    # replicas on 127.0.0.1
 */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

const ports = process.argv.slice(2).map(Number);
if (!ports.length || ports.some((p) => !Number.isInteger(p) || p <= 0)) {
  process.stderr.write("usage: node bench/proxy.ts <port> [<port>...]\n");
  process.exit(2);
}
const agents = ports.map(() => new Agent({ keepAlive: true, maxSockets: 512 }));
let next = 0;

const server = createServer((req, res) => {
  const i = next++ % ports.length;
  const upstream = request({
    host: "127.0.0.1",
    port: ports[i],
    method: req.method,
    path: req.url,
    headers: req.headers,
    agent: agents[i],
  }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  upstream.on("error", (err) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
    res.end(JSON.stringify({ detail: `proxy: replica on port ${ports[i]}: ${err.message}` }));
  });
  // A client that goes away mid-stream (a joined SSE stream it stopped reading) ends the upstream request too.
  res.on("close", () => void (res.writableFinished || upstream.destroy()));
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
