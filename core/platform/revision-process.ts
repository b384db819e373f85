/**
 * One revision on the local listener: `agentcli serve <bundle> --port <p> --data-dir <dir>`
 * as a child process, its output captured line by line, `GET /ok` as the health check, and a
 * restart with backoff when it crashes after having been healthy.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { selfInvocation } from "../runtime.ts";

const HEALTH_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 10_000;

/** A free TCP port on `host`. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, host, () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface RevisionProcessOptions {
  revisionId: string;
  bundlePath: string;
  dataDir: string;
  host: string;
  env: Record<string, string>;
  log: (line: string) => void;
  /** The argv prefix that starts agentcli (tests may point it elsewhere). */
  command?: string[];
}

export class RevisionProcess {
  readonly opts: RevisionProcessOptions;
  port = 0;
  private child: ChildProcess | null = null;
  private stopping = false;
  private healthy = false;
  private restarts = 0;
  private tail: string[] = [];

  constructor(opts: RevisionProcessOptions) {
    this.opts = opts;
  }

  /** The current child's process id (it changes after a restart). */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get address(): string {
    return `${this.opts.host}:${this.port}`;
  }

  /** Starts the process and resolves once `/ok` answers 200; throws with the last output if it exits or times out first. */
  async start(signal?: AbortSignal): Promise<void> {
    this.port = await freePort(this.opts.host);
    this.spawn();
    const deadline = Date.now() + HEALTH_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (signal?.aborted) throw new Error("the rollout was interrupted");
      if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) {
        const code = this.child?.exitCode ?? this.child?.signalCode;
        throw new Error(`the revision process exited (${code}) before it was healthy${this.tail.length ? `: ${this.tail.slice(-5).join(" | ")}` : ""}`);
      }
      if (await this.probe()) {
        this.healthy = true;
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    await this.stop();
    throw new Error(`the revision did not answer GET /ok within ${HEALTH_TIMEOUT_MS / 1000}s`);
  }

  /** One health check. */
  async probe(): Promise<boolean> {
    try {
      const res = await fetch(`http://${this.address}/ok`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }

  private spawn(): void {
    const [cmd, ...pre] = this.opts.command ?? selfInvocation();
    const args = [...pre, "serve", this.opts.bundlePath, "--port", String(this.port), "--data-dir", this.opts.dataDir];
    const child = spawn(cmd!, args, { env: this.opts.env, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    const onData = (buf: Buffer) => {
      for (const line of buf.toString("utf8").split("\n")) {
        if (!line.trim()) continue;
        this.tail.push(line);
        if (this.tail.length > 50) this.tail.shift();
        this.opts.log(line);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("error", (err) => this.opts.log(`cannot start the revision process: ${err.message}`));
    child.on("exit", (code, sig) => {
      if (this.stopping || this.child !== child) return;
      this.opts.log(`revision process exited (${code ?? sig})`);
      if (!this.healthy) return;
      const delay = Math.min(30_000, 500 * 2 ** this.restarts++);
      this.opts.log(`restarting in ${delay} ms`);
      setTimeout(() => {
        if (!this.stopping) this.spawn();
      }, delay).unref();
    });
  }

  /** Stops the process: SIGTERM, then SIGKILL after a grace period. */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
  }
}
