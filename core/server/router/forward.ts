/**
 * Forwards one HTTP request to a revision (`host:port`), streamed both ways (SSE passes through
 * untouched), for the `local` compute's proxy and the `agentcli router`. For a new canary
 * thread (`place`), the answer is read whole, the thread it names is recorded, and only then is
 * the answer passed on, so a client never learns the id of a thread the router has not placed.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { request as httpRequest } from "node:http";
import { threadIdOf } from "./canary-split.ts";

/** The largest `POST /threads` answer read to learn the new thread's id. */
const MAX_THREAD_BODY = 1 << 20;

export interface ForwardOptions {
  /** The revision: `host:port`. */
  target: string;
  /** A new canary thread: records the id its answer names; rejecting answers 502. */
  place?: (threadId: string) => Promise<void>;
  /** What the answer names as the store when `place` rejects (its own error stays out: it may name the database). */
  store?: string;
  /** Called once when the exchange ends (answered, failed or closed by the client). */
  done?: () => void;
}

const json = (res: ServerResponse, status: number, detail: string) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ detail }));

/** Forwards `req` to `o.target` (`host:port`) and its answer to `res`. */
export function forwardRequest(req: IncomingMessage, res: ServerResponse, o: ForwardOptions): void {
  const { target } = o;
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    o.done?.();
  };
  const cut = target.lastIndexOf(":");
  const upstream = httpRequest(
    {
      host: target.slice(0, cut),
      port: Number(target.slice(cut + 1)),
      method: req.method,
      path: req.url,
      headers: {
        ...req.headers,
        // A new canary thread's answer is read for its id: ask for it uncompressed.
        ...(o.place ? { "accept-encoding": "identity" } : {}),
        "x-forwarded-host": req.headers["x-forwarded-host"] ?? req.headers.host ?? "",
        "x-forwarded-proto": req.headers["x-forwarded-proto"] ?? "http",
      },
    },
    (up) => {
      if (o.place) {
        return void placeThen(up, res, { place: o.place, store: o.store ?? "the canary's thread store", finish });
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
      up.on("end", finish);
      up.on("error", finish);
    },
  );
  upstream.on("error", (err) => {
    finish();
    if (!res.headersSent) json(res, 502, `The revision did not answer: ${err.message}`);
    else res.destroy();
  });
  res.on("close", () => {
    finish();
    if (!upstream.writableEnded || !res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

/** Reads a new canary thread's answer, records the thread, then passes the answer on. */
function placeThen(
  up: IncomingMessage,
  res: ServerResponse,
  p: { place: (threadId: string) => Promise<void>; store: string; finish: () => void },
): void {
  const { finish } = p;
  const chunks: Buffer[] = [];
  let size = 0;
  up.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_THREAD_BODY) chunks.push(chunk);
  });
  up.on("error", finish);
  up.on("end", async () => {
    const body = Buffer.concat(chunks);
    const id = threadIdOf(body);
    try {
      if (id) await p.place(id);
    } catch {
      json(res, 502, `The new thread could not be recorded: ${p.store} did not answer; retry`);
      finish();
      return;
    }
    const headers = { ...up.headers };
    delete headers["transfer-encoding"];
    headers["content-length"] = String(body.length);
    res.writeHead(up.statusCode ?? 502, headers);
    res.end(body);
    finish();
  });
}
