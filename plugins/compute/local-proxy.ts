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
 * reaches the other revision (the rule and the forwarding are core's: `CanarySplit`,
 * `forwardRequest`, shared with `agentcli router`). Where each thread goes is cached and read from the store
 * for a thread this proxy has not seen (it started again, or another one placed it).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type CanaryRecord, CanarySplit, forwardRequest, limitConnectionsPerClient } from "../../core/index.ts";

const WAIT_LIMIT_MS = 60_000;

export type { CanaryRecord };

interface Canary {
  target: string;
  /** The routing rule and the threads' record (core: shared with `agentcli router`). */
  split: CanarySplit;
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

  /** A revision moved to another address (restarted on another port): what went to `from` goes to `to`. */
  retarget(from: string, to: string): void {
    if (this.target === from) this.switchTo(to);
    if (this.canary?.target === from) this.canary = { ...this.canary, target: to };
  }

  /**
   * Sends `percent` % of new threads, and every later request of those threads, to `target`;
   * `placed`: threads the canary already took (a restart), so its share stays exact.
   */
  startCanary(target: string, o: { percent: number; record: CanaryRecord; placed?: number }): void {
    this.canary = { target, split: new CanarySplit(o) };
  }

  /** Ends the canary: its threads go back to the serving target (promote: switch to it first). */
  endCanary(): void {
    this.canary = null;
  }

  /** The canary's target and how many new threads it took of how many (tests, logs). */
  get canaryState(): { target: string; placed: number; seen: number } | null {
    const c = this.canary;
    return c ? { target: c.target, ...c.split.state } : null;
  }

  /** Where a request goes during a canary; `placing`: a new thread to record once created. */
  private async route(req: IncomingMessage, stable: string): Promise<{ target: string; placing: Canary | null }> {
    const c = this.canary;
    if (!c) return { target: stable, placing: null };
    const r = await c.split.route(req.method, req.url);
    return r.to === "canary" ? { target: c.target, placing: r.placing ? c : null } : { target: stable, placing: null };
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
    let routed: { target: string; placing: Canary | null };
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
    forwardRequest(req, res, {
      target,
      // A thread created on a canary that has ended since is not recorded: it runs where it was made.
      place: placing ? async (id) => void (this.canary === placing && await placing.split.place(id)) : undefined,
      store: "the control plane's database",
      done: () => {
        const n = (this.inFlight.get(target) ?? 1) - 1;
        this.inFlight.set(target, n);
        if (n === 0) { for (const cb of this.drained.get(target)?.splice(0) ?? []) cb(); }
      },
    });
  }
}
