/**
 * One revision of the `local` compute: `agentcli serve <bundle> --host <h> --port <p> --data-dir <dir>`
 * (and `--packages <dir>` when its build installed npm packages)
 * as a child process, its output captured line by line, `GET /ok` as the health check, and a
 * restart with backoff when it crashes after having been healthy.
 *
 * The child does not outlive the control plane: it runs with `AGENTCLI_EXIT_WITH_PARENT=1`
 * and its standard input is a pipe this process holds open, so it shuts down when this process
 * dies, even by SIGKILL. Its pid is also recorded in `pidFile`, so a control plane that starts
 * again can stop one still running ({@link stopRecorded}) before it starts another on the same
 * data folder.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import process from "node:process";
import { agentcliError, processAlive, RevisionProcessExited, RevisionProcessUnhealthy } from "../../core/index.ts";

const HEALTH_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 10_000;
/** How many ports a start tries when another process takes the one picked first. */
const PORT_ATTEMPTS = 5;
/** What `serve` says once it listens (core/cli/serve.ts), and when its port is taken (PortInUse). */
const SERVING = /\bserving ".*" on \S/;
const PORT_TAKEN = /Cannot listen on \S+: the port is in use/;

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
  /** The argv prefix that starts agentcli (the control plane's `ComputeContext.command`). */
  command: string[];
  /** Where the running child's pid is recorded (with this process's pid as its parent). */
  pidFile?: string;
  /** The npm packages the build installed for the bundle (`serve --packages`), or null. */
  packages?: string | null;
  /** Picks the port a start tries ({@link freePort}). */
  pickPort?: (host: string) => Promise<number>;
  /**
   * The revision serves another address (`host:port`) from now on: restarted after a crash,
   * its port had been taken meanwhile. What routes to it follows (the deployment's proxy).
   */
  onMoved?: (from: string, to: string) => void;
}

interface PidRecord {
  pid: number;
  parent: number;
  bundle: string;
}

/** False when the process with this pid is surely not the recorded one (Linux: its command line lacks the bundle path). */
function sameProcess(rec: PidRecord): boolean {
  try {
    return readFileSync(`/proc/${rec.pid}/cmdline`, "utf8").includes(rec.bundle);
  } catch {
    return processAlive(rec.pid);
  }
}

/**
 * Stops the revision process recorded in `pidFile` when it still runs and the control plane
 * that started it is gone (a live one keeps its own): SIGTERM, then SIGKILL after a grace
 * period; resolves once it has exited. Returns the pid it stopped, or null.
 */
export async function stopRecorded(pidFile: string, graceMs = STOP_GRACE_MS): Promise<number | null> {
  let rec: PidRecord;
  try {
    rec = JSON.parse(readFileSync(pidFile, "utf8")) as PidRecord;
  } catch {
    return null;
  }
  if (!Number.isInteger(rec.pid) || rec.pid <= 0) return null;
  if (rec.parent !== process.pid && processAlive(rec.parent)) return null;
  if (!processAlive(rec.pid) || !sameProcess(rec)) {
    rmSync(pidFile, { force: true });
    return null;
  }
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(rec.pid, sig);
    } catch { /* already gone */ }
  };
  signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (processAlive(rec.pid) && sameProcess(rec)) {
    if (Date.now() > deadline) signal("SIGKILL");
    await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(pidFile, { force: true });
  return rec.pid;
}

export class RevisionProcess {
  readonly opts: RevisionProcessOptions;
  port = 0;
  private child: ChildProcess | null = null;
  private stopping = false;
  private healthy = false;
  private restarts = 0;
  private tail: string[] = [];
  /** The current child said it serves `port`. */
  private served = false;
  /** The address served before a restart moved to another port, until the new child serves. */
  private movedFrom: string | null = null;

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

  /**
   * Starts the process and resolves once it says it serves its port and `/ok` answers 200;
   * throws with the last output if it exits or times out first. The port is free when picked,
   * but another process may bind it before the child does: the child then exits saying so
   * (PortInUse) and starts again on another port, and only its own `serving ... on <url>` line
   * proves that what answers there is this revision (another server's `/ok` is not its health).
   */
  async start(signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + HEALTH_TIMEOUT_MS;
    for (let attempt = 1;; attempt++) {
      this.port = await (this.opts.pickPort ?? freePort)(this.opts.host);
      this.spawn();
      const up = await this.untilServing(deadline, signal);
      if (up === "up") return;
      if (up === "exited" && this.portTaken() && attempt < PORT_ATTEMPTS) {
        this.opts.log(`port ${this.port} was taken before the revision bound it; starting it on another`);
        continue;
      }
      if (up === "exited") {
        const code = this.child?.exitCode ?? this.child?.signalCode;
        throw agentcliError(RevisionProcessExited, { code: String(code), tail: this.tail.slice(-5).join(" | ") });
      }
      await this.stop();
      throw agentcliError(RevisionProcessUnhealthy, { seconds: HEALTH_TIMEOUT_MS / 1000 });
    }
  }

  /** The current child exited saying another process holds its port. */
  private portTaken(): boolean {
    return this.tail.some((l) => PORT_TAKEN.test(l) && l.includes(`:${this.port}:`));
  }

  /** Waits until the child serves its port and answers `/ok` ("up"), exits, or `deadline` passes. */
  private async untilServing(deadline: number, signal?: AbortSignal): Promise<"up" | "exited" | "late"> {
    while (Date.now() < deadline) {
      // The rollout writes its own status when interrupted; this message is not shown.
      if (signal?.aborted) throw new Error("the rollout was interrupted");
      if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return "exited";
      if (this.served && await this.probe()) {
        this.healthy = true;
        return "up";
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return "late";
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
    const [cmd, ...pre] = this.opts.command;
    const args = [
      ...pre,
      "serve",
      this.opts.bundlePath,
      "--host",
      this.opts.host,
      "--port",
      String(this.port),
      "--data-dir",
      this.opts.dataDir,
      ...(this.opts.packages ? ["--packages", this.opts.packages] : []),
    ];
    // stdin: a pipe nobody writes to; it closes when this process dies, and the child exits with it.
    const child = spawn(cmd!, args, {
      // The revision's runs execute on its workers while it has some (core/storage/runs/revisions.ts).
      env: { ...this.opts.env, AGENTCLI_EXIT_WITH_PARENT: "1", AGENTCLI_REVISION_ID: this.opts.revisionId },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    this.served = false;
    child.stdin!.on("error", () => {});
    const pidFile = this.opts.pidFile;
    if (pidFile && child.pid) {
      const rec: PidRecord = { pid: child.pid, parent: process.pid, bundle: this.opts.bundlePath };
      writeFileSync(pidFile, JSON.stringify(rec));
      child.once("exit", () => {
        try {
          if ((JSON.parse(readFileSync(pidFile, "utf8")) as PidRecord).pid === rec.pid) {
            rmSync(pidFile, { force: true });
          }
        } catch { /* no pid file, or not ours to remove */ }
      });
    }
    const onData = (buf: Buffer) => {
      for (const line of buf.toString("utf8").split("\n")) {
        if (!line.trim()) continue;
        this.tail.push(line);
        if (this.tail.length > 50) this.tail.shift();
        // Its own banner (its URL may show `[redacted]` when a secret's value is part of it):
        // serve binds the port it is given or exits, so this child holds it.
        if (this.child === child && SERVING.test(line)) this.onServing();
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
      setTimeout(() => void this.restart(), delay).unref();
    });
  }

  /**
   * Starts the child again after a crash: on its port, unless another process took that port
   * meanwhile (the last child said so); then on a new one, which what routes to the revision
   * follows once the child serves it.
   */
  private async restart(): Promise<void> {
    if (this.stopping) return;
    if (this.portTaken()) {
      const from = this.address;
      try {
        this.port = await (this.opts.pickPort ?? freePort)(this.opts.host);
      } catch (err) {
        this.opts.log(`cannot pick a port for the revision: ${(err as Error).message}`);
        return;
      }
      this.movedFrom ??= from;
      this.opts.log(`port ${from.slice(from.lastIndexOf(":") + 1)} was taken meanwhile; restarting on ${this.port}`);
      this.tail = [];
      if (this.stopping) return;
    }
    this.spawn();
  }

  /** The current child says it serves its port (its address moved: what routes to it is told). */
  private onServing(): void {
    this.served = true;
    const from = this.movedFrom;
    this.movedFrom = null;
    if (from !== null && from !== this.address) this.opts.onMoved?.(from, this.address);
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
