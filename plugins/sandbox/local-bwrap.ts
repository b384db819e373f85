/**
 * The bubblewrap (`bwrap`) half of the local sandbox runtime (./local.ts): the argv of one
 * command in a sandbox (what it sees: the host's system directories read-only, its workspace
 * and skills, bounded tmpfs mounts, no environment of the server) and the process that runs it
 * (in the sandbox's cgroup when there is one, its output capped, killed at its timeout or when
 * the workspace outgrows its quota).
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { constants } from "node:os";
import { agentcliError, SandboxBwrapFailed, SandboxCgroupMoveFailed, SandboxNotFoundError } from "../../core/index.ts";
import { type CgroupSupport, openGroup, type SandboxGroup } from "./local-cgroup.ts";
import type { LimitHits, Limits } from "./local-limits.ts";
import { watchWorkspace } from "./local-quota.ts";

const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];
const SECRET_FILES = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"];
/** The uid and gid commands run as when the server runs as root. */
export const NOBODY = 65534;
/** Size of a sandbox's /run (programs keep pid and lock files there). */
const RUN_BYTES = 1024 * 1024;

export const asRoot = () => process.getuid?.() === 0;

/** What every command of one sandbox shares in its argv. */
export interface BwrapSandbox {
  /** Host paths that must stay invisible (the data dir, the project...). */
  hidden: string[];
  limits: Limits;
  /** Whether the sandbox has a cgroup (else memory and processes are bounded per process). */
  grouped: boolean;
}

/** One command: a bash script and its positional arguments (`$1`...). */
export interface BwrapCommand {
  script: string;
  args: string[];
}

/** The bwrap argv of one command in a sandbox (its directories come as descriptors 3 and 4, see {@link runBwrap}). */
export function bwrapArgs({ hidden, limits, grouped }: BwrapSandbox, { script, args }: BwrapCommand): string[] {
  const argv = [
    "--unshare-all",
    ...(limits.network ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--clearenv",
  ];
  const env = {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: "/workspace",
    LANG: "C.UTF-8",
    TMPDIR: "/tmp",
    USER: "sandbox",
  };
  for (const [k, v] of Object.entries(env)) argv.push("--setenv", k, v);
  for (const d of SYSTEM_DIRS) argv.push("--ro-bind-try", d, d);
  for (const f of SECRET_FILES) if (existsSync(f)) argv.push("--ro-bind", "/dev/null", f);
  // The host paths that must stay invisible, where they fall inside a mounted system dir.
  for (const p of hidden) {
    if (!SYSTEM_DIRS.some((d) => p === d || p.startsWith(`${d}/`)) || !existsSync(p)) continue;
    if (statSync(p).isDirectory()) argv.push("--tmpfs", p);
    else argv.push("--ro-bind", "/dev/null", p);
  }
  // Every writable file system is bounded: tmpfs sizes here (their pages also count in the
  // sandbox's memory when it has a cgroup), the workspace by ./local-quota.ts.
  const tmp = String(Math.floor(limits.tmpMb * 1024 * 1024));
  argv.push("--dev", "/dev", "--size", tmp, "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--proc", "/proc");
  argv.push("--size", tmp, "--tmpfs", "/tmp", "--size", String(RUN_BYTES), "--tmpfs", "/run");
  // Descriptors opened by this process: a sandbox deleted meanwhile fails here, not half-mounted.
  argv.push("--bind-fd", "3", "/workspace", "--bind-fd", "4", "/skills", "--chdir", "/workspace");
  // With a cgroup, memory and processes are bounded for the sandbox as a whole; without one, per process.
  const perProcess = grouped ? "" : `-v ${Math.floor(limits.memoryMb * 1024)} -u ${limits.processes} `;
  const prelude = `ulimit ${perProcess}-f ${Math.floor(limits.workspaceMb * 1024)} 2>/dev/null; exec 2>&1; `;
  argv.push("--", "/bin/bash", "-c", prelude + script, "sandbox", ...args);
  return argv;
}

export interface Spawned {
  stdout: Uint8Array;
  total: number;
  exitCode: number | null;
  timedOut: boolean;
  /** Limits the command ran into (see ./local-limits.ts). */
  hits: LimitHits;
}

/** One command to run: in which sandbox (its id and directory), its argv, its input and bounds. */
export interface RunOptions {
  id: string;
  dir: string;
  argv: string[];
  stdin?: Uint8Array;
  maxBytes: number;
  timeoutMs: number;
  limits: Limits;
  cgroups: CgroupSupport;
}

/** Started in the sandbox's cgroup: waits on descriptor 5 until the server has moved it there, then becomes bwrap. */
const JOIN_THEN_BWRAP = 'read -r _ <&5; exec 5<&-; exec bwrap "$@"';

/**
 * Runs bwrap on the sandbox at `dir` (in the sandbox's cgroup when there is one); keeps at
 * most `maxBytes` of stdout (draining the rest), kills the whole sandbox at `timeoutMs` or
 * when it grows its workspace past the quota.
 */
export async function runBwrap(opts: RunOptions): Promise<Spawned> {
  const { id, dir } = opts;
  let fds: number[];
  try {
    fds = [openSync(join(dir, "workspace"), "r"), openSync(join(dir, "skills"), "r")];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new SandboxNotFoundError(id, `Local sandbox "${id}" no longer exists (its directory ${dir} is gone)`);
    }
    throw err;
  }
  let group: SandboxGroup | null = null;
  try {
    if (opts.cgroups.kind !== "none") group = openGroup(opts.cgroups, id, opts.limits);
  } catch (err) {
    for (const fd of fds) closeSync(fd);
    throw err;
  }
  const before = group?.counters();
  try {
    const r = await spawnBwrap({ ...opts, workspace: join(dir, "workspace"), fds, group });
    const after = group?.counters();
    if (before && after) {
      r.hits.memory = after.oomKills > before.oomKills;
      r.hits.processes = after.pidsRefused > before.pidsRefused;
    }
    return r;
  } finally {
    await group?.release();
  }
}

/** A command's process: bwrap, or a shell that waits to be moved into `group` and then becomes bwrap. */
interface SpawnOptions extends RunOptions {
  workspace: string;
  /** The descriptors of the workspace and skills directories (3 and 4 of the child), closed here once passed on. */
  fds: number[];
  group: SandboxGroup | null;
}

function spawnBwrap(opts: SpawnOptions): Promise<Spawned> {
  const { workspace, argv, fds, group } = opts;
  return new Promise<Spawned>((resolve, reject) => {
    const stdio = [opts.stdin ? "pipe" : "ignore", "pipe", "pipe", ...fds, ...(group ? ["pipe"] : [])] as Array<
      "pipe" | "ignore" | number
    >;
    const child = spawn(group ? "/bin/sh" : "bwrap", group ? ["-c", JOIN_THEN_BWRAP, "sh", ...argv] : argv, {
      stdio,
      detached: true,
      env: group ? { PATH: process.env.PATH ?? "/usr/bin:/bin" } : {},
      ...(asRoot() ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    for (const fd of fds) closeSync(fd);
    const chunks: Buffer[] = [];
    let kept = 0;
    let total = 0;
    let stderr = "";
    let timedOut = false;
    const killAll = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    if (group && child.pid) {
      const gate = (child.stdio as unknown as Array<NodeJS.WritableStream>)[5];
      try {
        group.add(child.pid);
        gate.end("go\n");
      } catch (err) {
        killAll();
        gate.end();
        return reject(agentcliError(SandboxCgroupMoveFailed, { reason: (err as Error).message }));
      }
    }
    const timer = setTimeout(() => {
      timedOut = true;
      killAll();
    }, opts.timeoutMs);
    const quota = watchWorkspace(workspace, Math.floor(opts.limits.workspaceMb * 1024), killAll);
    child.stdout!.on("data", (b: Buffer) => {
      total += b.length;
      if (kept < opts.maxBytes) {
        const part = b.subarray(0, opts.maxBytes - kept);
        chunks.push(part);
        kept += part.length;
      }
    });
    child.stderr!.on("data", (b: Buffer) => {
      if (stderr.length < 4096) stderr += b.toString("utf8");
    });
    child.on("error", (err) => {
      clearTimeout(timer);
      void quota.stop();
      reject(err);
    });
    child.on("close", async (code, signal) => {
      clearTimeout(timer);
      const workspaceOver = await quota.stop();
      // bwrap's own failures (a mount it cannot make) come on its stderr: the command's went to stdout.
      if (code === 1 && stderr.startsWith("bwrap:")) {
        return reject(agentcliError(SandboxBwrapFailed, { output: stderr.trim() }));
      }
      const exitCode = timedOut ? null : signal ? 128 + (constants.signals[signal] ?? 0) : code;
      resolve({
        stdout: new Uint8Array(Buffer.concat(chunks)),
        total,
        exitCode,
        timedOut,
        hits: { memory: false, processes: false, workspace: workspaceOver },
      });
    });
    if (opts.stdin) {
      child.stdin!.on("error", () => {});
      child.stdin!.end(opts.stdin);
    }
  });
}
