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
 * The bwrap argv of a command and its process: ./local-bwrap.ts.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  type AgentcliError,
  agentcliError,
  definePlugin,
  type Env,
  type ExecuteResult,
  type Sandbox,
  SandboxBwrapMissing,
  SandboxBwrapRefused,
  type SandboxCreateOptions,
  type SandboxFileError,
  SandboxLocalNeedsHost,
  SandboxNotFoundError,
  SandboxRuntimeSettingInvalid,
} from "../../core/index.ts";
import { type CgroupSupport, detectCgroups } from "./local-cgroup.ts";
import { limitNotes, type Limits, limitsOf } from "./local-limits.ts";
import { asRoot, bwrapArgs, type BwrapSandbox, NOBODY, runBwrap } from "./local-bwrap.ts";

const DEFAULT_TIMEOUT_MS = 120_000;
/** Downloads larger than this are refused (a file tool reading a huge file). */
const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024;

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
  const box: BwrapSandbox = { hidden: opts.host?.hiddenPaths ?? [], limits, grouped };
  const fileOp = async (script: string, path: string, stdin?: Uint8Array) => {
    const r = await runBwrap({
      id,
      dir,
      argv: bwrapArgs(box, { script, args: [path] }),
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
      const r = await runBwrap({
        id,
        dir,
        argv: bwrapArgs(box, { script: command, args: [] }),
        maxBytes: limits.outputBytes,
        timeoutMs,
        limits,
        cgroups,
      });
      let output = new TextDecoder().decode(r.stdout);
      const notes = r.timedOut ? [] : limitNotes(limits, { hits: r.hits, output, exitCode: r.exitCode });
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
    throw agentcliError(SandboxLocalNeedsHost);
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
async function checkBwrap(env: Env): Promise<AgentcliError | null> {
  const runtime = "local";
  try {
    limitsOf(env);
  } catch (err) {
    return agentcliError(SandboxRuntimeSettingInvalid, { runtime, problem: (err as Error).message });
  }
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
  if (trial.missing) return agentcliError(SandboxBwrapMissing, { runtime });
  if (trial.code !== 0) {
    return agentcliError(SandboxBwrapRefused, { runtime, output: trial.err.trim() || `exit code ${trial.code}` });
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
