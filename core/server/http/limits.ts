/**
 * The agent server's input bounds, each with the environment variable that raises it: the
 * request body and a history answer (HTTP bounds, here), and run admission's (one message,
 * the messages of one request, the runs one user may have queued or executing: the engine's,
 * ../../engine/runs/admission.ts). Everything is checked before work is done; a refusal is a
 * 413 (429 for the run quota) naming the limit and the variable.
 *
 * @example
 * const limits = limitsFromEnv(process.env); // throws a user error naming a malformed variable
 * const server = await createAgentServer({ graphs, limits });
 */
import { type AgentcliError, agentcliError, EnvInvalid } from "../../kernel/index.ts";
import { describeBound, type LimitSetting, RUN_LIMIT_SETTINGS, type RunLimits, tooLarge } from "../../engine/index.ts";

export { checkMessages, tooManyRuns } from "../../engine/index.ts";

export interface ServerLimits extends RunLimits {
  /** Largest request body, bytes (`AGENTCLI_MAX_BODY_MB`). */
  maxBodyBytes: number;
  /** Largest `/threads/{id}/history` answer, bytes: fewer states are returned past it (`AGENTCLI_MAX_HISTORY_MB`). */
  maxHistoryBytes: number;
}

/** Every bound: its variable, the unit the variable is in, and the default (in that unit); in the order of the docs. */
export const LIMIT_SETTINGS: readonly LimitSetting<keyof ServerLimits>[] = [
  { key: "maxBodyBytes", env: "AGENTCLI_MAX_BODY_MB", unit: 1024 * 1024, unitName: "MiB", default: 25 },
  RUN_LIMIT_SETTINGS.maxMessageBytes,
  RUN_LIMIT_SETTINGS.maxMessages,
  { key: "maxHistoryBytes", env: "AGENTCLI_MAX_HISTORY_MB", unit: 1024 * 1024, unitName: "MiB", default: 64 },
  RUN_LIMIT_SETTINGS.maxQueuedPerOwner,
  RUN_LIMIT_SETTINGS.maxRunningPerOwner,
];

/** The defaults of every bound. */
export const DEFAULT_LIMITS: ServerLimits = Object.fromEntries(
  LIMIT_SETTINGS.map((s) => [s.key, s.default * s.unit]),
) as unknown as ServerLimits;

function setting(key: keyof ServerLimits): LimitSetting {
  return LIMIT_SETTINGS.find((s) => s.key === key)!;
}

/** The bounds set in the environment (absent ones are left out); a malformed value is a user error naming it. */
export function limitsFromEnv(env: Record<string, string | undefined>): Partial<ServerLimits> {
  const out: Partial<ServerLimits> = {};
  for (const s of LIMIT_SETTINGS) {
    const raw = env[s.env]?.trim();
    if (!raw) continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || (n === 0 && !s.zeroMeansNone)) {
      throw agentcliError(EnvInvalid, {
        action: "start the server",
        name: s.env,
        value: raw,
        problem: `is not a ${s.zeroMeansNone ? "" : "positive "}number of ${s.unitName}`,
        fix: `Set it to a number of ${s.unitName} (default ${s.default}${s.zeroMeansNone ? "; 0 for no limit" : ""}).`,
      });
    }
    out[s.key] = Math.floor(n * s.unit);
  }
  return out;
}

/** "1024 KiB" for a bound in bytes (or its count), in the unit of its variable. */
export function describeLimit(key: keyof ServerLimits, value: number): string {
  return describeBound(setting(key), value);
}

/** A 413 naming what is too large, the bound and the variable that raises it. */
export function overLimit(key: keyof ServerLimits, limits: ServerLimits, what: string): AgentcliError {
  return tooLarge(setting(key), limits[key], what);
}
