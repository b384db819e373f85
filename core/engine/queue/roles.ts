/**
 * What a `serve` replica does (`--role` / `AGENTCLI_ROLE`) and how many runs it executes at
 * once (`--workers` / `AGENTCLI_WORKERS`). `all` (the default) serves the Agent API and runs
 * the queue; `api` serves the API and runs nothing (its runs go to worker replicas through
 * the shared database); `worker` runs the queue and answers only `/ok` and `/info`. The
 * control plane's Kubernetes manifests run the two as separate Deployments.
 */
import { availableParallelism } from "node:os";
import { agentcliError, type Env, EnvNotInRange, userError } from "../../kernel/index.ts";

export type ServerRole = "api" | "worker" | "all";
export const SERVER_ROLES: readonly ServerRole[] = ["api", "worker", "all"];

/**
 * Default runs executed at once: 4 per CPU, between 4 and 64. A run mostly waits on its
 * model and tools, so several share a CPU.
 */
export function defaultWorkers(cpus = safeParallelism()): number {
  return Math.min(64, Math.max(4, 4 * cpus));
}

function safeParallelism(): number {
  try {
    return availableParallelism();
  } catch {
    return 2;
  }
}

/** The role from `--role` (`flag`) or `AGENTCLI_ROLE`; a bad value is a usage error naming it. */
export function roleSetting(flag: string | undefined, env: Env): ServerRole {
  const [raw, from] = flag !== undefined ? [flag, "--role"] : [env.AGENTCLI_ROLE?.trim() || "all", "AGENTCLI_ROLE"];
  if ((SERVER_ROLES as readonly string[]).includes(raw)) return raw as ServerRole;
  // --role is the command line (exit 2); AGENTCLI_ROLE is the environment (exit 1).
  throw userError(from === "--role" ? "ARGS_INVALID" : "ENV_INVALID", {
    message: `Cannot start the server: ${from} "${raw}" is not a role`,
    hint: `Use one of ${
      SERVER_ROLES.join(", ")
    }: api serves the Agent API only, worker runs the queue only, all does both (default).`,
  });
}

/** Runs at once from `--workers` (`flag`) or `AGENTCLI_WORKERS`, else {@link defaultWorkers}; an `api` replica runs none. */
export function workersSetting(flag: number | undefined, env: Env, role: ServerRole): number {
  if (role === "api") return 0;
  if (flag !== undefined) return flag;
  const raw = env.AGENTCLI_WORKERS?.trim();
  if (!raw) return defaultWorkers();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) {
    throw agentcliError(EnvNotInRange, {
      name: "AGENTCLI_WORKERS",
      value: raw,
      min: 1,
      max: 10_000,
      fix: `Set it to the runs this replica executes at once (default 4 per CPU: ${defaultWorkers()} here).`,
    });
  }
  return n;
}
