/**
 * The Node adapter: serves an agent server's `fetch` with @hono/node-server. A taken port
 * is a user error naming `--port`. (Deno uses `Deno.serve(server.fetch)` directly.)
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { userError } from "../errors.ts";

export interface Listening {
  port: number;
  host: string;
  /** Stops accepting connections and closes open ones (SSE streams included). */
  close(): Promise<void>;
}

/** Listens on `host:port` (port 0 picks a free one); `upgrade` takes WebSocket upgrades (without it they are refused). */
export async function listen(
  server: { fetch: (req: Request) => Response | Promise<Response> },
  opts: { port: number; host?: string; upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void },
): Promise<Listening> {
  const { serve } = await import("@hono/node-server");
  const host = opts.host ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    const srv = serve({ fetch: server.fetch, port: opts.port, hostname: host }, (info) => {
      srv.off("error", onError);
      resolve({
        port: info.port,
        host,
        close: () =>
          new Promise<void>((res) => {
            const s = srv as unknown as { closeAllConnections?: () => void; close: (cb: () => void) => void };
            s.close(() => res());
            s.closeAllConnections?.();
          }),
      });
    });
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") {
        reject(userError("PORT_IN_USE", {
          message: `Cannot listen on ${host}:${opts.port}: the port is in use`,
          hint: `Stop the other process, or pick another port with --port <int>.`,
        }));
      } else reject(err);
    };
    srv.once("error", onError);
    if (opts.upgrade) srv.on("upgrade", opts.upgrade);
  });
}
