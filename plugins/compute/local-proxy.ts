/**
 * The stable address of a deployment on the `local` compute: a reverse proxy that forwards
 * to the healthy revision process. Switching targets is atomic; while paused (the embedded
 * database changes hands) or while no revision is up, requests wait instead of failing, so
 * a rollout drops no request. The proxy counts in-flight requests per target so an old
 * revision is stopped only once it has answered everything it took.
 *
 * A canary (issue 37) sends a share of NEW threads (`POST /threads`) to a second target and
 * records each thread it placed there in the control plane's store (`CanaryThreads`) before
 * the client learns the thread's id; every request naming such a thread (`/threads/<id>/...`)
 * goes to the canary, everything else to the serving target, so no turn of a thread ever
 * reaches the other revision. Where each thread goes is cached here and read from the store
 * for a thread this proxy has not seen (it started again, or another one placed it).
 */
import {
  createServer,
  type IncomingMessage,
  request as httpRequest,
  type Server,
  type ServerResponse,
} from "node:http";
import { type CanaryThreads, limitConnectionsPerClient } from "../../core/index.ts";

const WAIT_LIMIT_MS = 60_000;
/** The largest `POST /threads` answer read to learn the new thread's id. */
const MAX_THREAD_BODY = 1 << 20;
/** Threads whose revision is cached (the oldest is forgotten first; the store still knows). */
const MAX_CACHED_THREADS = 100_000;

/** Where a canary's threads are recorded: the store, the deployment and the canary's revision. */
export interface CanaryRecord {
  threads: CanaryThreads;
  deploymentId: string;
  revisionId: string;
}

interface Canary {
  target: string;
  percent: number;
  /** New threads seen and how many went to the canary (an exact share, not a random one). */
  seen: number;
  placed: number;
  record: CanaryRecord;
  /** Thread id -> on the canary (true) or on the serving revision (false), as far as known here. */
  cached: Map<string, boolean>;
}

export class RevisionProxy {
  private target: string | null = null;
  private paused = false;
  private waiters: Array<() => void> = [];
  private readonly inFlight = new Map<string, number>();
  private readonly drained = new Map<string, Array<() => void>>();
  private server: Server | null = null;
  private canary: Canary | null = null;

  /**
   * `maxConnectionsPerClient`: connections one client address may hold at once (0: no bound).
   * The proxy is the revision processes' only client, so it bounds clients for them.
   */
  private readonly opts: { maxConnectionsPerClient: number };

  constructor(opts: { maxConnectionsPerClient: number }) {
    this.opts = opts;
  }

  /** Starts listening; resolves to the port (0 picks a free one). */
  async listen(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    limitConnectionsPerClient(server, this.opts.maxConnectionsPerClient);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    const address = server.address();
    return typeof address === "object" && address ? address.port : port;
  }

  /** Sends new requests to `target` (`host:port`) from now on. */
  switchTo(target: string | null): void {
    this.target = target;
    this.wake();
  }

  get current(): string | null {
    return this.target;
  }

  /**
   * Sends `percent` % of new threads, and every later request of those threads, to `target`;
   * `placed`: threads the canary already took (a restart), so its share stays exact.
   */
  startCanary(target: string, o: { percent: number; record: CanaryRecord; placed?: number }): void {
    const placed = o.placed ?? 0;
    const seen = Math.round((placed * 100) / o.percent);
    this.canary = { target, percent: o.percent, seen, placed, record: o.record, cached: new Map() };
  }

  /** Ends the canary: its threads go back to the serving target (promote: switch to it first). */
  endCanary(): void {
    this.canary = null;
  }

  /** The canary's target and how many new threads it took of how many (tests, logs). */
  get canaryState(): { target: string; placed: number; seen: number } | null {
    const c = this.canary;
    return c ? { target: c.target, placed: c.placed, seen: c.seen } : null;
  }

  /** Where a request goes during a canary; `placing`: a new thread to record once created. */
  private async route(req: IncomingMessage, stable: string): Promise<{ target: string; placing: boolean }> {
    const c = this.canary;
    if (!c) return { target: stable, placing: false };
    const path = (req.url ?? "/").split("?")[0]!;
    const thread = /^\/threads\/([^/]+)/.exec(path)?.[1];
    if (thread && thread !== "search" && thread !== "prune") {
      return { target: (await this.onCanary(c, decodeURIComponent(thread))) ? c.target : stable, placing: false };
    }
    if (req.method === "POST" && (path === "/threads" || path === "/threads/")) {
      c.seen++;
      if (Math.floor((c.seen * c.percent) / 100) > c.placed) {
        c.placed++;
        return { target: c.target, placing: true };
      }
    }
    return { target: stable, placing: false };
  }

  /** Whether a thread runs on the canary: cached, else asked of the store (and cached). */
  private async onCanary(c: Canary, threadId: string): Promise<boolean> {
    const known = c.cached.get(threadId);
    if (known !== undefined) return known;
    const revision = await c.record.threads.revisionOf({ deploymentId: c.record.deploymentId, threadId });
    const on = revision === c.record.revisionId;
    if (this.canary === c) this.cache(c, threadId, on);
    return on;
  }

  private cache(c: Canary, threadId: string, on: boolean): void {
    c.cached.set(threadId, on);
    if (c.cached.size > MAX_CACHED_THREADS) c.cached.delete(c.cached.keys().next().value!);
  }

  /** Holds new requests until {@link resume}. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wake();
  }

  /** Resolves once `target` has no request in flight (or after `timeoutMs`). */
  async drain(target: string, timeoutMs: number): Promise<void> {
    if (!this.inFlight.get(target)) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      const list = this.drained.get(target) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.drained.set(target, list);
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const w of this.waiters.splice(0)) w();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }

  private wake(): void {
    if (this.paused || !this.target) return;
    for (const w of this.waiters.splice(0)) w();
  }

  private async ready(): Promise<string | null> {
    const deadline = Date.now() + WAIT_LIMIT_MS;
    while ((this.paused || !this.target) && this.server) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.server ? this.target : null;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const stable = await this.ready();
    if (!stable) {
      res.writeHead(503, { "content-type": "application/json" }).end(
        JSON.stringify({ detail: "The deployment has no healthy revision running; retry shortly" }),
      );
      return;
    }
    let routed: { target: string; placing: boolean };
    try {
      routed = await this.route(req, stable);
    } catch {
      // The store's error stays out of the answer (it may name the database).
      res.writeHead(503, { "content-type": "application/json", "retry-after": "1" }).end(
        JSON.stringify({
          detail: "Cannot tell which revision serves this thread: the control plane's database did not answer; retry",
        }),
      );
      return;
    }
    const { target, placing } = routed;
    this.inFlight.set(target, (this.inFlight.get(target) ?? 0) + 1);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const n = (this.inFlight.get(target) ?? 1) - 1;
      this.inFlight.set(target, n);
      if (n === 0) { for (const cb of this.drained.get(target)?.splice(0) ?? []) cb(); }
    };
    const [host, port] = [target.slice(0, target.lastIndexOf(":")), Number(target.slice(target.lastIndexOf(":") + 1))];
    const upstream = httpRequest(
      {
        host,
        port,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          // A new canary thread's answer is read for its id: ask for it uncompressed.
          ...(placing ? { "accept-encoding": "identity" } : {}),
          "x-forwarded-host": req.headers.host ?? "",
          "x-forwarded-proto": "http",
        },
      },
      (up) => {
        if (placing) return void this.remember(up, { res, target, finish });
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.on("end", finish);
        up.on("error", finish);
      },
    );
    upstream.on("error", (err) => {
      finish();
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" }).end(
          JSON.stringify({ detail: `The revision did not answer: ${err.message}` }),
        );
      } else res.destroy();
    });
    res.on("close", () => {
      finish();
      if (!upstream.writableEnded || !res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  /** A thread created on the canary: its id is recorded before the client learns it, then the answer is passed on. */
  private remember(
    up: IncomingMessage,
    o: { res: ServerResponse; target: string; finish: () => void },
  ): void {
    const chunks: Buffer[] = [];
    let size = 0;
    up.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_THREAD_BODY) chunks.push(chunk);
    });
    up.on("error", o.finish);
    up.on("end", async () => {
      const body = Buffer.concat(chunks);
      try {
        await this.record(body, o.target);
      } catch {
        o.res.writeHead(502, { "content-type": "application/json" }).end(
          JSON.stringify({
            detail: "The new thread could not be recorded: the control plane's database did not answer; retry",
          }),
        );
        o.finish();
        return;
      }
      const headers = { ...up.headers };
      delete headers["transfer-encoding"];
      headers["content-length"] = String(body.length);
      o.res.writeHead(up.statusCode ?? 502, headers);
      o.res.end(body);
      o.finish();
    });
  }

  /** Records the thread a canary's `POST /threads` answer names (in the store, then here). */
  private async record(body: Buffer, target: string): Promise<void> {
    let id: unknown;
    try {
      id = (JSON.parse(body.toString("utf8")) as { thread_id?: unknown }).thread_id;
    } catch { /* not a thread: nothing to record */ }
    const c = this.canary;
    if (typeof id !== "string" || c?.target !== target) return;
    await c.record.threads.assign({
      deploymentId: c.record.deploymentId,
      revisionId: c.record.revisionId,
      threadId: id,
    });
    if (this.canary === c) this.cache(c, id, true);
  }
}
