/**
 * The Node adapter: serves an agent server's `fetch` with @hono/node-server. A taken port
 * is a user error naming `--port`. (Deno uses `Deno.serve(server.fetch)` directly.)
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { clientErrorReporter, type ServerLog, userError } from "../../kernel/index.ts";
import {
  type AllowedHosts,
  defaultAllowedHosts,
  hostAllowed,
  refusedHostMessage,
  refusedHostResponse,
} from "./allowed-hosts.ts";
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, limitConnectionsPerClient } from "./client-connections.ts";
import { DEFAULT_MAX_CONNECTIONS } from "./listen-settings.ts";

export interface Listening {
  port: number;
  host: string;
  /** Replaces the `Host` allow-list (dev reads its project's `.env` after it listens). */
  allowHosts(hosts: AllowedHosts): void;
  /** Stops accepting connections and closes open ones (SSE streams included). */
  close(): Promise<void>;
}

/**
 * How long a client may take to send its request headers (also: how long a new connection may
 * stay silent), then its whole request, and how long an idle keep-alive connection is kept (ms).
 */
export const DEFAULT_TIMEOUTS = { headersMs: 15_000, requestMs: 120_000, keepAliveMs: 5_000 };

export { DEFAULT_MAX_CONNECTIONS } from "./listen-settings.ts";

export interface ListenOptions {
  port: number;
  host?: string;
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Header, whole-request and keep-alive timeouts (defaults {@link DEFAULT_TIMEOUTS}). */
  timeouts?: { headersMs?: number; requestMs?: number; keepAliveMs?: number };
  maxConnections?: number;
  /** Connections one client address may hold at once (default {@link DEFAULT_MAX_CONNECTIONS_PER_CLIENT}; 0: no bound). */
  maxConnectionsPerClient?: number;
  /**
   * The `Host` names served (./allowed-hosts.ts); others get a 403 before any route or auth
   * runs. Default: loopback names and IP addresses on a loopback bind, any name otherwise.
   */
  allowedHosts?: AllowedHosts;
  /** Where client errors (malformed or timed-out requests) are reported: one line each, at most one line per 10 s. */
  log?: Pick<ServerLog, "warn">;
}

/**
 * Listens on `host:port` (port 0 picks a free one); `upgrade` takes WebSocket upgrades
 * (without it they are refused). Slow or malformed clients get a 408/400 and are dropped;
 * they cost one log line at most every 10 s, never a stack trace.
 */
export async function listen(
  server: { fetch: (req: Request) => Response | Promise<Response> },
  opts: ListenOptions,
): Promise<Listening> {
  const { serve } = await import("@hono/node-server");
  const host = opts.host ?? "127.0.0.1";
  const headersTimeout = opts.timeouts?.headersMs ?? DEFAULT_TIMEOUTS.headersMs;
  const requestTimeout = Math.max(opts.timeouts?.requestMs ?? DEFAULT_TIMEOUTS.requestMs, headersTimeout);
  const report = clientErrorReporter(opts.log);
  let hosts = opts.allowedHosts ?? defaultAllowedHosts({ mode: "serve", bind: host });
  const fetch = (req: Request, ...rest: unknown[]) => {
    const name = req.headers.get("host");
    if (!hostAllowed(hosts, name)) return refusedHostResponse(name!);
    return (server.fetch as (req: Request, ...rest: unknown[]) => Response | Promise<Response>)(req, ...rest);
  };
  return new Promise((resolve, reject) => {
    const srv = serve({
      fetch,
      port: opts.port,
      hostname: host,
      // Timeouts are checked this often (Node's default, 30 s, lets a slow client hold on far past them).
      serverOptions: {
        headersTimeout,
        requestTimeout,
        keepAliveTimeout: opts.timeouts?.keepAliveMs ?? DEFAULT_TIMEOUTS.keepAliveMs,
        connectionsCheckingInterval: Math.min(1000, headersTimeout),
      },
    }, (info) => {
      srv.off("error", onError);
      resolve({
        port: info.port,
        host,
        allowHosts: (next) => {
          hosts = next;
        },
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
    srv.maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    srv.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      const timedOut = err.code === "ERR_HTTP_REQUEST_TIMEOUT" || err.code === "ERR_HTTP_HEADERS_TIMEOUT";
      report(
        timedOut
          ? "a client was too slow sending its request (dropped)"
          : `a client sent a malformed request (${err.code ?? err.message})`,
      );
      if (socket.writable && !(socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
        socket.end(
          timedOut
            ? "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n"
            : "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n",
        );
      }
      socket.destroy();
    });
    limitConnectionsPerClient(
      srv as unknown as import("node:net").Server,
      opts.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
      () =>
        report(
          "a client address reached its connection limit (AGENTCLI_MAX_CONNECTIONS_PER_CLIENT); its new connections are refused",
        ),
    );
    if (opts.upgrade) {
      const upgrade = opts.upgrade;
      srv.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        const name = req.headers.host;
        if (hostAllowed(hosts, name)) return upgrade(req, socket, head);
        const body = JSON.stringify({ detail: refusedHostMessage(name!) });
        socket.end(
          `HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${
            Buffer.byteLength(body)
          }\r\n\r\n${body}`,
        );
      });
    }
  });
}
