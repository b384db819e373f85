/**
 * Connections per client address: one client (a script holding idle sockets) cannot take
 * every connection the server allows (`AGENTCLI_MAX_CONNECTIONS`) and shut others out. A
 * connection beyond the per-client bound is answered with a 503 and closed. IPv6 clients are
 * counted per /64 (one host usually holds a whole /64); IPv4-mapped IPv6 addresses count as
 * their IPv4 address.
 *
 * @example
 * limitConnectionsPerClient(httpServer, 128);
 */
import type { Server, Socket } from "node:net";

/** Connections one client address may hold at once (`AGENTCLI_MAX_CONNECTIONS_PER_CLIENT`; 0: no bound). */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 128;

/** The variable that changes {@link DEFAULT_MAX_CONNECTIONS_PER_CLIENT}. */
export const MAX_CONNECTIONS_PER_CLIENT_VARIABLE = "AGENTCLI_MAX_CONNECTIONS_PER_CLIENT";

const REFUSED_BODY = JSON.stringify({
  detail:
    `Cannot serve the connection: this client address holds too many connections at once (${MAX_CONNECTIONS_PER_CLIENT_VARIABLE}); close idle ones and retry`,
});
const REFUSED =
  `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\nRetry-After: 1\r\nContent-Length: ${
    Buffer.byteLength(REFUSED_BODY)
  }\r\n\r\n${REFUSED_BODY}`;

/** The key a client address is counted under. */
export function clientKey(address: string | undefined): string {
  if (!address) return "";
  const a = address.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/.exec(a);
  if (mapped) return mapped[1]!;
  if (!a.includes(":")) return a;
  const [head = "", tail = ""] = a.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = a.includes("::")
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right]
    : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

/**
 * Bounds the connections each client address holds on `server` to `max` (0: no bound).
 * The server's own connection listeners (the HTTP parser) see only accepted sockets.
 */
export function limitConnectionsPerClient(server: Server, max: number, onRefused?: (address: string) => void): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  const inner = server.listeners("connection") as Array<(socket: Socket) => void>;
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const key = clientKey(socket.remoteAddress);
    const n = open.get(key) ?? 0;
    if (n >= max) {
      onRefused?.(key);
      socket.on("error", () => {});
      socket.end(REFUSED, () => socket.destroy());
      return;
    }
    open.set(key, n + 1);
    socket.once("close", () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
    for (const fn of inner) fn.call(server, socket);
  });
}
