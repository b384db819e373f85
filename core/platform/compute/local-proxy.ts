/**
 * The stable address of a deployment on the local listener: a reverse proxy that forwards
 * to the healthy revision process. Switching targets is atomic; while paused (the embedded
 * database changes hands) or while no revision is up, requests wait instead of failing, so
 * a rollout drops no request. The proxy counts in-flight requests per target so an old
 * revision is stopped only once it has answered everything it took.
 */
import {
  createServer,
  type IncomingMessage,
  request as httpRequest,
  type Server,
  type ServerResponse,
} from "node:http";
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, limitConnectionsPerClient } from "../../server/index.ts";

const WAIT_LIMIT_MS = 60_000;

export class RevisionProxy {
  private target: string | null = null;
  private paused = false;
  private waiters: Array<() => void> = [];
  private readonly inFlight = new Map<string, number>();
  private readonly drained = new Map<string, Array<() => void>>();
  private server: Server | null = null;

  /**
   * `maxConnectionsPerClient`: connections one client address may hold at once (0: no bound).
   * The proxy is the revision processes' only client, so it bounds clients for them.
   */
  private readonly opts: { maxConnectionsPerClient?: number };

  constructor(opts: { maxConnectionsPerClient?: number } = {}) {
    this.opts = opts;
  }

  /** Starts listening; resolves to the port (0 picks a free one). */
  async listen(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    limitConnectionsPerClient(server, this.opts.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
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
    const target = await this.ready();
    if (!target) {
      res.writeHead(503, { "content-type": "application/json" }).end(
        JSON.stringify({ detail: "The deployment has no healthy revision running; retry shortly" }),
      );
      return;
    }
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
        headers: { ...req.headers, "x-forwarded-host": req.headers.host ?? "", "x-forwarded-proto": "http" },
      },
      (up) => {
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
}
