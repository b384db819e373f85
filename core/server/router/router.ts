/**
 * `agentcli router`'s server: the front of a Kubernetes deployment during a canary (issue 37).
 * Every request goes, streamed, to the serving revision's or the canary's Service by the
 * canary's rule ({@link CanarySplit}); the threads it places are in the deployment's own
 * PostgreSQL (./pg-threads.ts), so its replicas agree and a restart keeps each thread's
 * revision. `/router/ok` answers for the router itself (its probes).
 */
import { createServer, type Server } from "node:http";
import { agentcliError, PortInUse } from "../../kernel/index.ts";
import type { CanarySplit } from "./canary-split.ts";
import { forwardRequest } from "./forward.ts";

export interface RouterOptions {
  /** `http://host:port` of the serving revision and of the canary. */
  serving: string;
  canary: string;
  split: CanarySplit;
  host: string;
  port: number;
}

export interface RunningRouter {
  port: number;
  close(): Promise<void>;
}

/** `http://host[:port]` -> `host:port` (80 by default). */
function hostPort(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "80"}`;
}

export async function startCanaryRouter(o: RouterOptions): Promise<RunningRouter> {
  const targets = { serving: hostPort(o.serving), canary: hostPort(o.canary) };
  const server: Server = createServer((req, res) => {
    if (req.url === "/router/ok") return void res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    o.split.route(req.method, req.url).then(
      (route) =>
        forwardRequest(req, res, {
          target: targets[route.to],
          place: route.placing ? (id) => o.split.place(id) : undefined,
          store: "the deployment's database",
        }),
      () =>
        // The store's error stays out of the answer (it may name the database).
        res.writeHead(503, { "content-type": "application/json", "retry-after": "1" }).end(JSON.stringify({
          detail: "Cannot tell which revision serves this thread: the deployment's database did not answer; retry",
        })),
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once(
      "error",
      (err: NodeJS.ErrnoException) =>
        reject(err.code === "EADDRINUSE" ? agentcliError(PortInUse, { host: o.host, port: o.port }) : err),
    );
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : o.port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
