/**
 * Sandbox runtime `local` (`agentcli dev|serve --sandbox local`): runs the sandboxes of any
 * provider on this machine with bubblewrap (`bwrap`), one short-lived bwrap per command.
 *
 * A sandbox is a directory `<sandbox dir>/<id>/` holding `workspace/` (mounted at
 * `/workspace`, the working directory and `$HOME`) and `skills/` (at `/skills`). The rest of
 * its filesystem is the host's system directories (`/usr`, `/bin`, `/lib*`, `/sbin`, `/etc`,
 * `/opt`) read-only: they stand in for `[sandbox].image`. It never sees the host's other
 * directories (home directories, the project and its `.env`, the data dir, the bundle, other
 * sandboxes), the server's environment variables, or its processes. Limits (environment of
 * the server): no network unless `AGENTCLI_SANDBOX_ALLOW_NETWORK=1`; memory, processes, CPU,
 * /tmp and workspace sizes, output per command: see ./local-limits.ts (the variables) and
 * docs/security.md "Sandbox limits"; memory, processes and CPU hold for the sandbox's processes
 * together in a cgroup of the sandbox (./local-cgroup.ts), per process when the server cannot
 * make one (a start-up warning says so). The wall time per command is the `execute` tool's
 * `timeout`. When the server runs as root, commands run as uid 65534 (nobody), so nothing
 * runs as root on the host.
 * An idle local sandbox uses no resources (no process outlives its command), so it has no stop.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { constants } from "node:os";
import {
  definePlugin,
  type Env,
  type ExecuteResult,
  type Sandbox,
  type SandboxCreateOptions,
  type SandboxFileError,
  SandboxNotFoundError,
} from "../../core/index.ts";
import { type CgroupSupport, detectCgroups, openGroup, type SandboxGroup } from "./local-cgroup.ts";
import { limitNotes, type Limits, limitsOf } from "./local-limits.ts";
import { watchWorkspace } from "./local-quota.ts";

const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];
const SECRET_FILES = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"];
const NOBODY = 65534;
const DEFAULT_TIMEOUT_MS = 120_000;
/** Size of a sandbox's /run (programs keep pid and lock files there). */
const RUN_BYTES = 1024 * 1024;
/** Downloads larger than this are refused (a file tool reading a huge file). */
const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024;

const asRoot = () => process.getuid?.() === 0;

/** The bwrap argv of one command in a sandbox (its directories come as descriptors 3 and 4, see {@link runBwrap}). */
function bwrapArgs(hidden: string[], limits: Limits, grouped: boolean, script: string, args: string[]): string[] {
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

interface Spawned {
  stdout: Uint8Array;
  total: number;
  exitCode: number | null;
  timedOut: boolean;
  /** Limits the command ran into (see ./local-limits.ts). */
  hits: { memory: boolean; processes: boolean; workspace: boolean };
}

interface RunOptions {
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
async function runBwrap(id: string, dir: string, argv: string[], opts: RunOptions): Promise<Spawned> {
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
    const r = await spawnBwrap(join(dir, "workspace"), argv, fds, group, opts);
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

function spawnBwrap(
  workspace: string,
  argv: string[],
  fds: number[],
  group: SandboxGroup | null,
  opts: RunOptions,
): Promise<Spawned> {
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
        return reject(new Error(`Cannot move a sandbox command into its cgroup: ${(err as Error).message}`));
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
      if (code === 1 && stderr.startsWith("bwrap:")) return reject(new Error(stderr.trim()));
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

const UPLOAD =
  `p="$1"; case "$p" in /*) ;; *) exit 10;; esac; [ -d "$p" ] && exit 11; d="\${p%/*}"; if [ -n "$d" ]; then mkdir -p -- "$d" 2>/dev/null || exit 12; fi; cat > "$p" 2>/dev/null || exit 12`;
const DOWNLOAD =
  `p="$1"; case "$p" in /*) ;; *) exit 10;; esac; [ -d "$p" ] && exit 11; [ -e "$p" ] || exit 13; [ -r "$p" ] || exit 12; exec cat -- "$p"`;
const FILE_ERRORS: Record<number, SandboxFileError> = {
  10: "invalid_path",
  11: "is_directory",
  12: "permission_denied",
  13: "file_not_found",
};

function localSandbox(id: string, dir: string, opts: SandboxCreateOptions): Sandbox {
  const limits = limitsOf(opts.env);
  const cgroups = detectCgroups(opts.env);
  const grouped = cgroups.kind !== "none";
  const hidden = opts.host?.hiddenPaths ?? [];
  const fileOp = async (script: string, path: string, stdin?: Uint8Array) => {
    const r = await runBwrap(id, dir, bwrapArgs(hidden, limits, grouped, script, [path]), {
      stdin,
      maxBytes: MAX_DOWNLOAD_BYTES,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      limits,
      cgroups,
    });
    return { ...r, error: r.exitCode === 0 ? null : (FILE_ERRORS[r.exitCode ?? -1] ?? "permission_denied") };
  };
  return {
    id,
    async execute(command, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}): Promise<ExecuteResult> {
      const r = await runBwrap(id, dir, bwrapArgs(hidden, limits, grouped, command, []), {
        maxBytes: limits.outputBytes,
        timeoutMs,
        limits,
        cgroups,
      });
      let output = new TextDecoder().decode(r.stdout);
      const notes = r.timedOut ? [] : limitNotes(limits, r.hits, output, r.exitCode);
      if (!grouped && !r.timedOut && looksLimited(r.exitCode, output)) notes.push(perProcessNote(limits, cgroups));
      if (notes.length) output = [output.replace(/\n$/, ""), ...notes].filter(Boolean).join("\n");
      return {
        output,
        exitCode: r.exitCode,
        truncated: r.total > r.stdout.length,
        ...(r.timedOut ? { timedOut: true } : {}),
      };
    },
    async uploadFiles(files) {
      const out: Array<{ path: string; error: SandboxFileError | null }> = [];
      for (const f of files) out.push({ path: f.path, error: (await fileOp(UPLOAD, f.path, f.content)).error });
      return out;
    },
    async downloadFiles(paths) {
      const out: Array<{ path: string; content: Uint8Array | null; error: SandboxFileError | null }> = [];
      for (const path of paths) {
        const r = await fileOp(DOWNLOAD, path);
        out.push({
          path,
          content: r.error ? null : r.stdout,
          error: r.error ?? (r.total > r.stdout.length ? "permission_denied" : null),
        });
      }
      return out;
    },
    async delete() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function createLocal(opts: SandboxCreateOptions): Sandbox {
  if (!opts.host) {
    throw new Error(
      "the local sandbox runtime needs a directory on this machine (it runs only inside agentcli dev or serve)",
    );
  }
  const root = sandboxRoot(opts.host.stateDir);
  if (opts.sandboxId) {
    if (!/^local-[0-9a-f-]{36}$/.test(opts.sandboxId)) throw new SandboxNotFoundError(opts.sandboxId);
    const dir = join(root, opts.sandboxId);
    if (!existsSync(join(dir, "workspace"))) {
      throw new SandboxNotFoundError(
        opts.sandboxId,
        `Local sandbox "${opts.sandboxId}" no longer exists (its directory ${dir} is gone)`,
      );
    }
    return localSandbox(opts.sandboxId, dir, opts);
  }
  const id = `local-${crypto.randomUUID()}`;
  const dir = join(root, id);
  mkdirSync(root, { recursive: true, mode: 0o711 });
  try {
    mkdirSync(join(dir, "workspace"), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, "skills"), { mode: 0o700 });
    writeFileSync(
      join(dir, "sandbox.json"),
      JSON.stringify({ key: opts.key, provider: opts.provider, created_at: new Date().toISOString() }) + "\n",
    );
    if (asRoot()) { for (const d of [dir, join(dir, "workspace"), join(dir, "skills")]) chownSync(d, NOBODY, NOBODY); }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return localSandbox(id, dir, opts);
}

/** Where root keeps sandboxes whose configured directory "nobody" cannot enter (e.g. a project under /root). */
export const ROOT_FALLBACK_DIR = "/var/lib/agentcli/sandboxes";

/**
 * The directory of the sandboxes of `stateDir`. As root, commands run as nobody, which must be
 * able to reach it: when an ancestor (such as /root, mode 0700) is closed to other users, the
 * sandboxes live in {@link ROOT_FALLBACK_DIR}/<hash of the path> instead (the same one every
 * time, so a restarted server finds them again).
 */
export function sandboxRoot(stateDir: string): string {
  if (!asRoot() || reachableByNobody(stateDir)) return stateDir;
  mkdirSync(ROOT_FALLBACK_DIR, { recursive: true, mode: 0o711 });
  for (let d = ROOT_FALLBACK_DIR; d !== "/"; d = dirname(d)) {
    const mode = statSync(d).mode & 0o777;
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o011);
  }
  return join(ROOT_FALLBACK_DIR, createHash("sha256").update(resolve(stateDir)).digest("hex").slice(0, 16));
}

/** Whether every existing ancestor of `dir` can be entered by other users. */
function reachableByNobody(dir: string): boolean {
  for (let d = resolve(dir);; d = dirname(d)) {
    if (existsSync(d) && (statSync(d).mode & 0o001) === 0) return false;
    if (d === dirname(d)) return true;
  }
}

/** Whether a failed command may have run into a memory or process limit (killed, or out of memory or processes). */
function looksLimited(exitCode: number | null, output: string): boolean {
  if (exitCode === 0) return false;
  return exitCode === null || exitCode >= 128 ||
    /Cannot allocate memory|MemoryError|out of memory|Resource temporarily unavailable/i.test(output);
}

/** Appended, when the limits hold per process only, to a result that looks like it ran into one. */
function perProcessNote(limits: Limits, cgroups: CgroupSupport): string {
  const why = cgroups.kind === "none" ? cgroups.reason : "";
  return `[Sandbox limits on this server hold per process, not for the sandbox as a whole (no cgroup: ${why}): each process may use ${limits.memoryMb} MB of address space and start up to ${limits.processes} processes; CPU is not limited.]`;
}

/** The start-up warning when sandboxes cannot get a cgroup: what is enforced then, and how to get one. */
export function limitsWarning(env: Env): string | null {
  const cgroups = detectCgroups(env);
  if (cgroups.kind !== "none") return null;
  const limits = limitsOf(env);
  return (
    `local sandboxes get no cgroup here (${cgroups.reason}), so their limits hold per process only: ` +
    `${limits.memoryMb} MB of address space per process (AGENTCLI_SANDBOX_MEMORY_MB), ${limits.processes} processes (AGENTCLI_SANDBOX_MAX_PROCESSES, RLIMIT_NPROC), ` +
    `/tmp and /dev/shm of ${limits.tmpMb} MB each, a ${limits.workspaceMb} MB workspace quota; the memory of a sandbox's processes together and its CPU are not bounded. ` +
    "To bound them, run the server as root or give it a delegated cgroup v2 group in AGENTCLI_SANDBOX_CGROUP (for example one made by systemd-run --user -p Delegate=yes)."
  );
}

/** Says why bwrap cannot run here, or null. */
async function checkBwrap(env: Env): Promise<{ message: string; hint: string } | null> {
  try {
    limitsOf(env);
  } catch (err) {
    return { message: (err as Error).message, hint: "Fix the variable in the environment (or .env)." };
  }
  const install =
    "Install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap (Arch).";
  const trial = await new Promise<{ code: number | null; err: string; missing: boolean }>((resolve) => {
    const child = spawn("bwrap", ["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "/bin/true"], {
      stdio: ["ignore", "ignore", "pipe"],
      ...(asRoot() ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    let err = "";
    child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
    child.on(
      "error",
      (e: NodeJS.ErrnoException) => resolve({ code: null, err: e.message, missing: e.code === "ENOENT" }),
    );
    child.on("close", (code) => resolve({ code, err, missing: false }));
  });
  if (trial.missing) return { message: "bubblewrap (the bwrap program) is not installed", hint: install };
  if (trial.code !== 0) {
    return {
      message: `bwrap cannot create a sandbox here: ${trial.err.trim() || `exit code ${trial.code}`}`,
      hint:
        "bwrap needs unprivileged user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ allow bwrap in AppArmor, or set kernel.apparmor_restrict_unprivileged_userns=0).",
    };
  }
  return null;
}

export default definePlugin({
  name: "sandbox-local",
  kind: "sandbox-runtime",
  description: "Runs the sandboxes of any provider on this machine with bubblewrap (--sandbox local).",
  sandboxRuntime: {
    name: "local",
    capabilities: { persistentFiles: true, network: false, gpu: false },
    workdir: "/workspace",
    check: ({ env }) => checkBwrap(env),
    warnings: async ({ env }) => [limitsWarning(env)].filter((w): w is string => w !== null),
  },
  hooks: {
    "sandbox:create": (opts) => createLocal(opts),
  },
});
