/**
 * `GET /v2/sandboxes/dataplane/{id}/execute/ws`: LangSmith's streaming execute protocol, for
 * the Node HTTP server's `upgrade` event. The upgrade carries `X-Api-Key` (a 401 or 404
 * refuses it before any WebSocket exists). Client messages: `execute` (command,
 * timeout_seconds, shell, env, cwd, command_id, idle_timeout_seconds, kill_on_disconnect,
 * ttl_seconds), `reconnect` (command_id, stdout_offset, stderr_offset), `kill` (`input`: an
 * error, commands take no standard input).
 * Server messages: `started` {command_id, pid}, `stdout`/`stderr` {data, offset}, `exit`
 * {exit_code}, `error` {error_type, error}; the socket closes normally after `exit`.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { isUserError } from "../../kernel/index.ts";
import type { PlatformServices } from "../api/context.ts";
import type { CommandEvent, CommandSession } from "./commands.ts";
import { authenticateKey } from "../store/tenancy.ts";

const PATH = /^\/v2\/sandboxes\/dataplane\/([^/]+)\/execute\/ws\/?$/;

/** The `upgrade` listener; answers only its own path (other upgrades get a 404). */
export function sandboxUpgrade(
  s: PlatformServices,
  onError: (err: unknown) => void,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  const refuse = (socket: Duplex, status: number, message: string) => {
    const body = JSON.stringify({ detail: message });
    socket.end(
      `HTTP/1.1 ${status} ${
        status === 401 ? "Unauthorized" : status === 404 ? "Not Found" : "Error"
      }\r\ncontent-type: application/json\r\ncontent-length: ${
        Buffer.byteLength(body)
      }\r\nconnection: close\r\n\r\n${body}`,
    );
  };
  return (req, socket, head) => {
    void (async () => {
      const m = PATH.exec(new URL(req.url ?? "/", "http://x").pathname);
      if (!m) return refuse(socket, 404, "No WebSocket endpoint here");
      const key = req.headers["x-api-key"];
      if (typeof key !== "string" || !key) {
        return refuse(socket, 401, "Cannot authenticate: the X-Api-Key header is missing");
      }
      const caller = await authenticateKey(s.sql, key);
      if (!caller) return refuse(socket, 401, "Cannot authenticate: the API key is not valid");
      let row;
      try {
        row = await s.sandboxes.byId(caller.tenantId, decodeURIComponent(m[1]!));
      } catch (err) {
        if (isUserError(err)) return refuse(socket, err.status, err.message);
        throw err;
      }
      const { tenant_id: tenantId, id } = row;
      wss.handleUpgrade(req, socket, head, (ws) => serve(s, ws, { tenantId, sandboxId: id, onError }));
    })().catch((err) => {
      onError(err);
      refuse(socket, 500, "Internal error; the control plane logged it");
    });
  };
}

/** One WebSocket of a sandbox's `execute/ws`: runs or reattaches one command and streams its events. */
function serve(
  s: PlatformServices,
  ws: WebSocket,
  box: { tenantId: string; sandboxId: string; onError: (err: unknown) => void },
): void {
  const { sandboxId, onError } = box;
  let detach = () => {};
  let session: CommandSession | undefined;
  const send = (e: object) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(e));
  const follow = (sess: CommandSession, from?: { stdout: number; stderr: number }) => {
    session = sess;
    send({ type: "started", command_id: sess.id, pid: null });
    detach = sess.attach((e: CommandEvent) => {
      send(e);
      if (e.type === "exit" || e.type === "error") ws.close(1000);
    }, from);
  };
  const fail = (error_type: string, error: string) => {
    send({ type: "error", error_type, error });
    ws.close(1000);
  };
  ws.on("close", () => detach());
  ws.on("error", () => detach());
  ws.on("message", (raw) => {
    void (async () => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(String(raw));
      } catch {
        return fail("CommandError", "Cannot read the message: it is not JSON");
      }
      if (msg.type === "kill") return session?.kill();
      if (msg.type === "input") {
        return fail("CommandError", "Cannot send input: commands of this control plane take no standard input");
      }
      if (session) return fail("CommandError", "Cannot start another command on this connection");
      if (msg.type === "reconnect") {
        const sess = typeof msg.command_id === "string" ? s.commands.get(sandboxId, msg.command_id) : undefined;
        if (!sess) return fail("CommandNotFound", `Command not found: ${String(msg.command_id)}`);
        return follow(sess, { stdout: Number(msg.stdout_offset) || 0, stderr: Number(msg.stderr_offset) || 0 });
      }
      if (msg.type !== "execute") return fail("CommandError", `Cannot handle a message of type "${String(msg.type)}"`);
      if (typeof msg.command !== "string" || !msg.command) {
        return fail("CommandError", "Cannot execute: command is missing");
      }
      const commandId = typeof msg.command_id === "string" && msg.command_id ? msg.command_id : undefined;
      const existing = commandId ? s.commands.get(sandboxId, commandId) : undefined;
      if (existing) return follow(existing);
      const timeoutSeconds = typeof msg.timeout_seconds === "number" && msg.timeout_seconds >= 0
        ? msg.timeout_seconds
        : 60;
      const env = msg.env && typeof msg.env === "object"
        ? Object.fromEntries(Object.entries(msg.env).map(([k, v]) => [k, String(v)]))
        : undefined;
      const row = await s.sandboxes.byId(box.tenantId, sandboxId);
      const { runtime, ref } = await s.sandboxes.use(row);
      const proc = runtime.run(ref, {
        command: msg.command,
        shell: typeof msg.shell === "string" && msg.shell ? msg.shell : undefined,
        env,
        cwd: typeof msg.cwd === "string" && msg.cwd ? msg.cwd : undefined,
        timeoutMs: timeoutSeconds * 1000,
      });
      follow(s.commands.start(sandboxId, proc, {
        commandId,
        timeoutSeconds,
        idleSeconds: typeof msg.idle_timeout_seconds === "number" ? msg.idle_timeout_seconds : 300,
        killOnDisconnect: msg.kill_on_disconnect === true,
        ttlSeconds: typeof msg.ttl_seconds === "number" ? msg.ttl_seconds : 600,
      }));
    })().catch((err) => {
      if (isUserError(err)) return fail("CommandError", err.message);
      onError(err);
      fail("CommandError", "Internal error; the control plane logged it");
    });
  });
}
