/**
 * The control plane's sandboxes on a local listener: each is a folder under
 * `<data-dir>/sandboxes/<id>` and each process in it runs under bubblewrap (`bwrap`), with
 * the host's root filesystem read-only standing in for `image`, the sandbox's own `/home/user`
 * (its working directory) and `/tmp` writable and persistent, no network, no environment but
 * what the request passes, and the control plane's data folder and the machine's home
 * folders hidden.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import process from "node:process";
import { userError } from "../errors.ts";
import type { BoxProcess, BoxRuntime, SpawnOptions } from "./sandbox-runtime.ts";

const BASE_ENV: Record<string, string> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  HOME: "/home/user",
  LANG: "C.UTF-8",
};

export class LocalBoxRuntime implements BoxRuntime {
  readonly kind = "local";
  readonly #root: string;
  readonly #hidden: string[];
  readonly #running = new Map<string, Set<ChildProcess>>();

  /** `dataDir`: the control plane's data folder (hidden from sandboxes; sandboxes live under it). */
  constructor(opts: { dataDir: string; bwrap?: string }) {
    this.#root = join(resolve(opts.dataDir), "sandboxes");
    this.#hidden = [resolve(opts.dataDir)];
    this.#bwrap = opts.bwrap ?? "bwrap";
  }

  readonly #bwrap: string;

  #dir(id: string): string {
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error(`not a sandbox id: ${id}`);
    return join(this.#root, id);
  }

  async create(box: { id: string }): Promise<void> {
    await mkdir(join(this.#dir(box.id), "home"), { recursive: true });
    await mkdir(join(this.#dir(box.id), "tmp"), { recursive: true });
  }

  spawn(id: string, opts: SpawnOptions): BoxProcess {
    const dir = this.#dir(id);
    const args = [
      "--die-with-parent", "--new-session", "--unshare-all", "--clearenv",
      "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
      "--tmpfs", "/home", "--tmpfs", "/root", "--tmpfs", "/run",
      ...this.#hidden.flatMap((h) => ["--tmpfs", h]),
      "--bind", join(dir, "home"), "/home/user", "--bind", join(dir, "tmp"), "/tmp",
      "--chdir", opts.cwd ?? "/home/user",
    ];
    for (const [k, v] of Object.entries({ ...BASE_ENV, ...opts.env })) args.push("--setenv", k, v);
    const child = spawn(this.#bwrap, [...args, "--", ...opts.argv], { stdio: ["pipe", "pipe", "pipe"], detached: true });
    let set = this.#running.get(id);
    if (!set) this.#running.set(id, (set = new Set()));
    set.add(child);
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {}
    };
    const timer = opts.timeoutMs ? setTimeout(() => ((timedOut = true), kill()), opts.timeoutMs) : null;
    const exited = new Promise<{ exitCode: number | null; timedOut: boolean }>((res, rej) => {
      child.once("error", (err) => {
        if (timer) clearTimeout(timer);
        set.delete(child);
        const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
        rej(missing
          ? userError("PLUGIN_FAILED", {
            message: "Cannot run a sandbox command: bubblewrap (bwrap) is not installed on the control plane's machine",
            hint: "Install it (Debian/Ubuntu: apt-get install bubblewrap) and restart agentcli platform serve.",
          })
          : err);
      });
      child.once("close", (code, signal) => {
        if (timer) clearTimeout(timer);
        set.delete(child);
        res({ exitCode: code ?? (signal ? 128 + (signalNumber(signal) ?? 9) : null), timedOut });
      });
    });
    child.stdin.on("error", () => {});
    return {
      pid: child.pid ?? null,
      stdout: child.stdout as AsyncIterable<Uint8Array>,
      stderr: child.stderr as AsyncIterable<Uint8Array>,
      exited,
      write: (data) => {
        if (child.stdin.writable) child.stdin.write(data);
      },
      end: () => child.stdin.end(),
      kill,
    };
  }

  async stop(id: string): Promise<void> {
    const set = this.#running.get(id);
    if (!set) return;
    const all = [...set];
    for (const c of all) {
      try {
        if (c.pid) process.kill(-c.pid, "SIGKILL");
      } catch {}
    }
    await Promise.all(all.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once("close", r)))));
  }

  async remove(id: string): Promise<void> {
    await this.stop(id);
    this.#running.delete(id);
    await rm(this.#dir(id), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#running.keys()].map((id) => this.stop(id)));
  }
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  return ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal];
}
