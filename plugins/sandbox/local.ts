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
 * the server): no network unless `AGENTCLI_SANDBOX_ALLOW_NETWORK=1`; address space
 * `AGENTCLI_SANDBOX_MEMORY_MB` (2048); processes `AGENTCLI_SANDBOX_MAX_PROCESSES` (256);
 * output returned per command `AGENTCLI_SANDBOX_OUTPUT_KB` (100); the wall time per command
 * is the `execute` tool's `timeout`. When the server runs as root, commands run as uid 65534
 * (nobody), so the process limit applies and nothing runs as root on the host.
 * An idle local sandbox uses no resources (no process outlives its command), so it has no stop.
 */
import { spawn } from "node:child_process";
import { chownSync, closeSync, existsSync, mkdirSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { definePlugin, SandboxNotFoundError, type Env, type ExecuteResult, type Sandbox, type SandboxCreateOptions, type SandboxFileError } from "../../core/hooks.ts";

const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];
const SECRET_FILES = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"];
const NOBODY = 65534;
const DEFAULT_TIMEOUT_MS = 120_000;
/** Downloads larger than this are refused (a file tool reading a huge file). */
const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024;

interface Limits {
  memoryMb: number;
  processes: number;
  outputBytes: number;
  network: boolean;
}

function limitsOf(env: Env): Limits {
  const num = (name: string, dflt: number) => {
    const raw = env[name]?.trim();
    if (!raw) return dflt;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}="${raw}" is not a positive number (default ${dflt})`);
    return n;
  };
  return {
    memoryMb: num("AGENTCLI_SANDBOX_MEMORY_MB", 2048),
    processes: Math.floor(num("AGENTCLI_SANDBOX_MAX_PROCESSES", 256)),
    outputBytes: Math.floor(num("AGENTCLI_SANDBOX_OUTPUT_KB", 100) * 1024),
    network: /^(1|true|yes)$/i.test(env.AGENTCLI_SANDBOX_ALLOW_NETWORK?.trim() ?? ""),
  };
}

const asRoot = () => process.getuid?.() === 0;

/** The bwrap argv of one command in a sandbox (its directories come as descriptors 3 and 4, see {@link runBwrap}). */
function bwrapArgs(hidden: string[], limits: Limits, script: string, args: string[]): string[] {
  const argv = ["--unshare-all", ...(limits.network ? ["--share-net"] : []), "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"];
  const env = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOME: "/workspace", LANG: "C.UTF-8", TMPDIR: "/tmp", USER: "sandbox" };
  for (const [k, v] of Object.entries(env)) argv.push("--setenv", k, v);
  for (const d of SYSTEM_DIRS) argv.push("--ro-bind-try", d, d);
  for (const f of SECRET_FILES) if (existsSync(f)) argv.push("--ro-bind", "/dev/null", f);
  // The host paths that must stay invisible, where they fall inside a mounted system dir.
  for (const p of hidden) {
    if (!SYSTEM_DIRS.some((d) => p === d || p.startsWith(`${d}/`)) || !existsSync(p)) continue;
    if (statSync(p).isDirectory()) argv.push("--tmpfs", p);
    else argv.push("--ro-bind", "/dev/null", p);
  }
  argv.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run");
  // Descriptors opened by this process: a sandbox deleted meanwhile fails here, not half-mounted.
  argv.push("--bind-fd", "3", "/workspace", "--bind-fd", "4", "/skills", "--chdir", "/workspace");
  const prelude = `ulimit -v ${Math.floor(limits.memoryMb * 1024)} -u ${limits.processes} 2>/dev/null; exec 2>&1; `;
  argv.push("--", "/bin/bash", "-c", prelude + script, "sandbox", ...args);
  return argv;
}

interface Spawned {
  stdout: Uint8Array;
  total: number;
  exitCode: number | null;
  timedOut: boolean;
}

/**
 * Runs bwrap on the sandbox at `dir`; keeps at most `maxBytes` of stdout (draining the rest),
 * kills the whole sandbox at `timeoutMs`.
 */
function runBwrap(id: string, dir: string, argv: string[], opts: { stdin?: Uint8Array; maxBytes: number; timeoutMs: number }): Promise<Spawned> {
  let fds: number[];
  try {
    fds = [openSync(join(dir, "workspace"), "r"), openSync(join(dir, "skills"), "r")];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new SandboxNotFoundError(id, `Local sandbox "${id}" no longer exists (its directory ${dir} is gone)`);
    throw err;
  }
  return new Promise<Spawned>((resolve, reject) => {
    const child = spawn("bwrap", argv, {
      stdio: [opts.stdin ? "pipe" : "ignore", "pipe", "pipe", ...fds],
      detached: true,
      env: {},
      ...(asRoot() ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    for (const fd of fds) closeSync(fd);
    const chunks: Buffer[] = [];
    let kept = 0;
    let total = 0;
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, opts.timeoutMs);
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
      reject(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // bwrap's own failures (a mount it cannot make) come on its stderr: the command's went to stdout.
      if (code === 1 && stderr.startsWith("bwrap:")) return reject(new Error(stderr.trim()));
      resolve({ stdout: new Uint8Array(Buffer.concat(chunks)), total, exitCode: timedOut || signal ? null : code, timedOut });
    });
    if (opts.stdin) {
      child.stdin!.on("error", () => {});
      child.stdin!.end(opts.stdin);
    }
  });
}

const UPLOAD = `p="$1"; case "$p" in /*) ;; *) exit 10;; esac; [ -d "$p" ] && exit 11; d="\${p%/*}"; if [ -n "$d" ]; then mkdir -p -- "$d" 2>/dev/null || exit 12; fi; cat > "$p" 2>/dev/null || exit 12`;
const DOWNLOAD = `p="$1"; case "$p" in /*) ;; *) exit 10;; esac; [ -d "$p" ] && exit 11; [ -e "$p" ] || exit 13; [ -r "$p" ] || exit 12; exec cat -- "$p"`;
const FILE_ERRORS: Record<number, SandboxFileError> = { 10: "invalid_path", 11: "is_directory", 12: "permission_denied", 13: "file_not_found" };

function localSandbox(id: string, dir: string, opts: SandboxCreateOptions): Sandbox {
  const limits = limitsOf(opts.env);
  const hidden = opts.host?.hiddenPaths ?? [];
  const fileOp = async (script: string, path: string, stdin?: Uint8Array) => {
    const r = await runBwrap(id, dir, bwrapArgs(hidden, limits, script, [path]), { stdin, maxBytes: MAX_DOWNLOAD_BYTES, timeoutMs: DEFAULT_TIMEOUT_MS });
    return { ...r, error: r.exitCode === 0 ? null : (FILE_ERRORS[r.exitCode ?? -1] ?? "permission_denied") };
  };
  return {
    id,
    async execute(command, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}): Promise<ExecuteResult> {
      const r = await runBwrap(id, dir, bwrapArgs(hidden, limits, command, []), { maxBytes: limits.outputBytes, timeoutMs });
      return { output: new TextDecoder().decode(r.stdout), exitCode: r.exitCode, truncated: r.total > r.stdout.length, ...(r.timedOut ? { timedOut: true } : {}) };
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
        out.push({ path, content: r.error ? null : r.stdout, error: r.error ?? (r.total > r.stdout.length ? "permission_denied" : null) });
      }
      return out;
    },
    async delete() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function createLocal(opts: SandboxCreateOptions): Sandbox {
  if (!opts.host) throw new Error("the local sandbox runtime needs a directory on this machine (it runs only inside agentcli dev or serve)");
  const root = opts.host.stateDir;
  if (opts.sandboxId) {
    if (!/^local-[0-9a-f-]{36}$/.test(opts.sandboxId)) throw new SandboxNotFoundError(opts.sandboxId);
    const dir = join(root, opts.sandboxId);
    if (!existsSync(join(dir, "workspace"))) throw new SandboxNotFoundError(opts.sandboxId, `Local sandbox "${opts.sandboxId}" no longer exists (its directory ${dir} is gone)`);
    return localSandbox(opts.sandboxId, dir, opts);
  }
  const id = `local-${crypto.randomUUID()}`;
  const dir = join(root, id);
  mkdirSync(root, { recursive: true, mode: 0o711 });
  if (asRoot()) assertReachableByNobody(root);
  try {
    mkdirSync(join(dir, "workspace"), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, "skills"), { mode: 0o700 });
    writeFileSync(join(dir, "sandbox.json"), JSON.stringify({ key: opts.key, provider: opts.provider, created_at: new Date().toISOString() }) + "\n");
    if (asRoot()) for (const d of [dir, join(dir, "workspace"), join(dir, "skills")]) chownSync(d, NOBODY, NOBODY);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return localSandbox(id, dir, opts);
}

/** As root, commands run as nobody, which must be able to reach the sandbox directory. */
function assertReachableByNobody(root: string): void {
  for (let d = resolve(root); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) {
      throw new Error(
        `Cannot create a local sandbox under ${root}: the server runs as root, so sandboxes run as the user "nobody", which cannot enter ${d}. ` +
          "Set AGENTCLI_SANDBOX_DIR to a directory every user can enter (for example /var/lib/agentcli-sandboxes), or run the server as a regular user.",
      );
    }
    if (d === dirname(d)) return;
  }
}

/** Says why bwrap cannot run here, or null. */
async function checkBwrap(env: Env): Promise<{ message: string; hint: string } | null> {
  try {
    limitsOf(env);
  } catch (err) {
    return { message: (err as Error).message, hint: "Fix the variable in the environment (or .env)." };
  }
  const install = "Install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap (Arch).";
  const trial = await new Promise<{ code: number | null; err: string; missing: boolean }>((resolve) => {
    const child = spawn("bwrap", ["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "/bin/true"], { stdio: ["ignore", "ignore", "pipe"], ...(asRoot() ? { uid: NOBODY, gid: NOBODY } : {}) });
    let err = "";
    child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
    child.on("error", (e: NodeJS.ErrnoException) => resolve({ code: null, err: e.message, missing: e.code === "ENOENT" }));
    child.on("close", (code) => resolve({ code, err, missing: false }));
  });
  if (trial.missing) return { message: "bubblewrap (the bwrap program) is not installed", hint: install };
  if (trial.code !== 0) {
    return {
      message: `bwrap cannot create a sandbox here: ${trial.err.trim() || `exit code ${trial.code}`}`,
      hint: "bwrap needs unprivileged user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ allow bwrap in AppArmor, or set kernel.apparmor_restrict_unprivileged_userns=0).",
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
  },
  hooks: {
    "sandbox:create": (opts) => createLocal(opts),
  },
});
