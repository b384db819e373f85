/**
 * The limits of a local sandbox (`--sandbox local`), read from the server's environment, and
 * the notes a command's result gets when it ran into one. What enforces them is in
 * ./local-cgroup.ts (memory, processes, CPU of the sandbox's processes together), the bwrap
 * argv of ./local-bwrap.ts (tmpfs sizes of /tmp, /dev/shm, /run) and ./local-quota.ts (workspace).
 *
 * @example
 * const limits = limitsOf(env); // throws a message naming the variable on a bad value
 */
import { agentcliError, type Env, SandboxLimitInvalid } from "../../core/index.ts";

/** The limits of every local sandbox of one server. */
export interface Limits {
  /** Memory of all the sandbox's processes together (with a cgroup), else per process (address space). */
  memoryMb: number;
  /** Processes (and threads) of the sandbox together (with a cgroup), else per user (RLIMIT_NPROC). */
  processes: number;
  /** CPUs the sandbox may use together (with a cgroup); not enforced without one. */
  cpus: number;
  /** Size of each of /tmp and /dev/shm (tmpfs). */
  tmpMb: number;
  /** Disk quota of the workspace (/workspace), checked while commands run; each file at most this. */
  workspaceMb: number;
  /** Output returned per command. */
  outputBytes: number;
  network: boolean;
}

/** The variables, their defaults and meaning (the docs and the start-up errors quote these). */
export const LIMIT_VARIABLES = {
  AGENTCLI_SANDBOX_MEMORY_MB: { dflt: 2048, meaning: "memory of a sandbox's processes together, in MB" },
  AGENTCLI_SANDBOX_MAX_PROCESSES: { dflt: 256, meaning: "processes and threads of a sandbox together" },
  AGENTCLI_SANDBOX_CPUS: { dflt: 1, meaning: "CPUs a sandbox may use together (fractions allowed, e.g. 0.5)" },
  AGENTCLI_SANDBOX_TMP_MB: { dflt: 256, meaning: "size of a sandbox's /tmp (and of its /dev/shm), in MB" },
  AGENTCLI_SANDBOX_WORKSPACE_MB: { dflt: 2048, meaning: "disk quota of a sandbox's /workspace, in MB" },
  AGENTCLI_SANDBOX_OUTPUT_KB: { dflt: 100, meaning: "output returned per command, in KB" },
} as const;

/** The limits of `env`; throws SandboxLimitInvalid (naming the variable, its default and meaning) on a bad value. */
export function limitsOf(env: Env): Limits {
  const num = (name: keyof typeof LIMIT_VARIABLES) => {
    const { dflt, meaning } = LIMIT_VARIABLES[name];
    const raw = env[name]?.trim();
    if (!raw) return dflt;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) {
      throw agentcliError(SandboxLimitInvalid, { name, value: raw, meaning, fallback: dflt });
    }
    return n;
  };
  return {
    memoryMb: num("AGENTCLI_SANDBOX_MEMORY_MB"),
    processes: Math.max(1, Math.floor(num("AGENTCLI_SANDBOX_MAX_PROCESSES"))),
    cpus: num("AGENTCLI_SANDBOX_CPUS"),
    tmpMb: num("AGENTCLI_SANDBOX_TMP_MB"),
    workspaceMb: num("AGENTCLI_SANDBOX_WORKSPACE_MB"),
    outputBytes: Math.floor(num("AGENTCLI_SANDBOX_OUTPUT_KB") * 1024),
    network: /^(1|true|yes|on)$/i.test(env.AGENTCLI_SANDBOX_ALLOW_NETWORK?.trim() ?? ""),
  };
}

/** What one command ran into, as measured by the runtime. */
export interface LimitHits {
  memory: boolean;
  processes: boolean;
  workspace: boolean;
}

/** A command's result, as {@link limitNotes} reads it. */
export interface LimitedResult {
  hits: LimitHits;
  output: string;
  exitCode: number | null;
}

/** The note that tells the model (and the user reading the tool result) which limit a command hit. */
export function limitNotes(limits: Limits, { hits, output, exitCode }: LimitedResult): string[] {
  const notes: string[] = [];
  if (hits.memory) {
    notes.push(
      `[Sandbox limit: the sandbox's processes together reached its memory limit of ${limits.memoryMb} MB (AGENTCLI_SANDBOX_MEMORY_MB) and the kernel killed one (exit code 137 is SIGKILL). Use less memory at once, e.g. process data in parts.]`,
    );
  }
  if (hits.processes) {
    notes.push(
      `[Sandbox limit: the sandbox reached its limit of ${limits.processes} processes and threads (AGENTCLI_SANDBOX_MAX_PROCESSES); new ones could not start ("Resource temporarily unavailable").]`,
    );
  }
  if (hits.workspace || exitCode === 153 || /File size limit exceeded/.test(output)) {
    notes.push(
      `[Sandbox limit: /workspace holds at most ${limits.workspaceMb} MB (AGENTCLI_SANDBOX_WORKSPACE_MB) and no file may be larger: the command was stopped or its writes failed. Remove files you no longer need to make room.]`,
    );
  }
  if (/No space left on device/.test(output)) {
    notes.push(
      `[Sandbox limit: /tmp and /dev/shm hold at most ${limits.tmpMb} MB each (AGENTCLI_SANDBOX_TMP_MB); write large files under /workspace instead.]`,
    );
  }
  return notes;
}
