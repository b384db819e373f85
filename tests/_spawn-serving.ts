/**
 * Starts a server command (`agentcli dev`, `serve`, `platform serve`, `router`) on a free port and
 * resolves once the child itself says it serves that port.
 *
 * A port picked with `freePort` is free only when picked: another test (or another run on the
 * machine) may take it before the child binds it. The commands bind the port they are given or
 * exit with PortInUse (they never fall back to another), and a port has one listener, so the
 * child's own banner naming the port proves that what answers there is this child, while a
 * port answering alone proves only that *some* server holds it. When the child reports the port
 * in use, it is started again on another.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "../plugins/compute/revision-process.ts";

const CLI = fileURLToPath(new URL("../bin/agentcli.js", import.meta.url));

/** What each command prints once it serves; group 1 is the URL it serves. */
export const SERVING = {
  /**
   * `agentcli dev` (stdout, core/cli/dev.ts `printBanner`). The URL is `[redacted]` when a
   * variable named like a secret holds it.
   */
  dev: /^agentcli dev: ".*" is running\n\s*API:\s+(\S+)/m,
  /** `agentcli serve` (stderr, core/cli/serve.ts). */
  serve: /^\[serve\] serving ".*" on (\S+)$/m,
  /** `agentcli platform serve` (stderr, core/cli/platform.ts). */
  platform: /^Control plane \(\S+\) listening on (\S+) \(data:/m,
  /** `agentcli router` (stderr, core/cli/router.ts). */
  router: /^\[router\] routing on (\S+?): /m,
} as const;

/** What each of them says when another listener holds the port (PortInUse, core/kernel/errors/server.ts). */
export const PORT_TAKEN = /Cannot listen on \S+: the port is in use/;

export interface Serving {
  child: ChildProcess;
  port: number;
  /** `http://<host>:<port>`. */
  url: string;
  /** Everything the child printed so far, stdout and stderr. */
  output(): string;
  /** The child's exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM) unless it has exited, then waits for its exit (SIGKILL after 8 s). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnServingOptions {
  /** Spawns the command on `port`, stdout and stderr piped. */
  start: (port: number) => ChildProcess;
  /**
   * Its banner, from {@link SERVING}; null for a command whose banner is not known here
   * (LangGraph's own dev): one start, returned at once, for the caller to wait on otherwise.
   */
  serving: RegExp | null;
  /** Where it listens (127.0.0.1). */
  host?: string;
  /** How many ports to try (5). */
  attempts?: number;
  /**
   * A port the caller needs (a restart on the port its deployments' URLs name): no other is
   * tried, so a taken one fails the start; the wait is still on the child's own words.
   */
  port?: number;
}

/**
 * Starts `start(port)` on free ports until one child says it serves its port; rejects when a
 * child exits otherwise or says it serves another port (stopping it), or every port is taken.
 */
export async function spawnServing(opts: SpawnServingOptions): Promise<Serving> {
  const host = opts.host ?? "127.0.0.1";
  const attempts = opts.port ? 1 : opts.attempts ?? 5;
  for (let attempt = 1;; attempt++) {
    const port = opts.port ?? await freePort(host);
    const s = watch(opts.start(port), { port, url: `http://${host.includes(":") ? `[${host}]` : host}:${port}` });
    if (!opts.serving) return s;
    let served: "up" | "taken";
    try {
      served = await servedByChild(s, opts.serving);
    } catch (err) {
      await s.stop();
      throw err;
    }
    if (served === "up") return s;
    if (attempt === attempts) throw new Error(`the port was taken ${attempt} times:\n${s.output()}`);
  }
}

/** `agentcli serve <bundle> --data-dir <dataDir>` with exactly `env` (PATH added), once it says it serves. */
export function startServe(o: { bundle: string; dataDir: string; env: Record<string, string> }): Promise<Serving> {
  return spawnServing({
    serving: SERVING.serve,
    start: (port) =>
      spawn(process.execPath, [CLI, "serve", o.bundle, "--port", String(port), "--data-dir", o.dataDir], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...o.env },
        stdio: ["ignore", "pipe", "pipe"],
      }),
  });
}

function watch(child: ChildProcess, at: { port: number; url: string }): Serving {
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), 8000);
    await exited;
    clearTimeout(timer);
  };
  return { child, ...at, output: () => out, exited, stop };
}

/**
 * "up" once the child's banner names its port, "taken" when it exits saying the port is in use;
 * rejects when it exits otherwise or names another port.
 */
function servedByChild(s: Serving, serving: RegExp): Promise<"up" | "taken"> {
  const { child } = s;
  return new Promise((resolve, reject) => {
    const check = () => {
      const said = serving.exec(s.output())?.[1];
      if (said === undefined) return;
      if (said === "[redacted]" || portOf(said) === s.port) done(() => resolve("up"));
      else done(() => reject(new Error(`the child serves ${said}, not ${s.url}:\n${s.output()}`)));
    };
    const closed = (code: number | null, signal: string | null) =>
      done(() =>
        PORT_TAKEN.test(s.output())
          ? resolve("taken")
          : reject(new Error(`the child exited with ${code ?? signal} before serving ${s.url}:\n${s.output()}`))
      );
    const done = (settle: () => void) => {
      child.stdout!.off("data", check);
      child.stderr!.off("data", check);
      child.off("close", closed);
      settle();
    };
    // Listeners run in order: `watch`'s, which append to the output, come first.
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
    // "close", not "exit": by then all of its output is read (the port error comes last).
    child.once("close", closed);
    check();
  });
}

function portOf(url: string): number | null {
  try {
    return Number(new URL(url).port);
  } catch {
    return null;
  }
}
