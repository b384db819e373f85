/**
 * Numeric settings read from the server's environment (`AGENTCLI_RUN_TIMEOUT_SECONDS`,
 * `AGENTCLI_SANDBOX_IDLE_SECONDS`, ...): one parser, one error wording.
 */
import { userError } from "../errors.ts";
import type { Env } from "../hooks.ts";

/**
 * A number of seconds from `env[name]` (0 allowed), or `dflt` when unset.
 *
 * @example
 * const idle = secondsSetting(env, "AGENTCLI_SANDBOX_IDLE_SECONDS", 1800, "a sandbox may stay unused before it is stopped (0: never)");
 */
export function secondsSetting(env: Env, name: string, dflt: number, meaning: string): number {
  const raw = env[name]?.trim();
  if (!raw) return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    throw userError("ARGS_INVALID", {
      message: `Cannot start the server: ${name}="${raw}" is not a number of seconds`,
      hint: `Set it to the seconds ${meaning}; default ${dflt}.`,
    });
  }
  return n;
}
