/**
 * Numeric settings read from the server's environment (`AGENTCLI_RUN_TIMEOUT_SECONDS`,
 * `AGENTCLI_SANDBOX_IDLE_SECONDS`, ...): one parser, one error wording.
 */
import { agentcliError, type Env, EnvNotCount, EnvNotSeconds, EnvNotSwitch } from "../kernel/index.ts";

/**
 * A number of seconds from `env[name]` (0 allowed), or `dflt` when unset.
 *
 * @example
 * const idle = secondsSetting(env, "AGENTCLI_SANDBOX_IDLE_SECONDS", { default: 1800, meaning: "a sandbox may stay unused before it is stopped (0: never)" });
 */
export function secondsSetting(env: Env, name: string, o: { default: number; meaning: string }): number {
  const { default: dflt, meaning } = o;
  const raw = env[name]?.trim();
  if (!raw) return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    throw agentcliError(EnvNotSeconds, { name, value: raw, meaning, fallback: dflt });
  }
  return n;
}

/**
 * An on/off setting from `env[name]` (`1`/`true`/`on`/`yes` or `0`/`false`/`off`/`no`), or
 * `dflt` when unset.
 *
 * @example
 * const prepared = switchSetting(env, "AGENTCLI_PG_PREPARED_STATEMENTS", { default: true, meaning: "statements are prepared by name on PostgreSQL" });
 */
export function switchSetting(env: Env, name: string, o: { default: boolean; meaning: string }): boolean {
  const { default: dflt, meaning } = o;
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return dflt;
  if (["1", "true", "on", "yes"].includes(raw)) return true;
  if (["0", "false", "off", "no"].includes(raw)) return false;
  throw agentcliError(EnvNotSwitch, { name, value: env[name] ?? "", meaning, fallback: dflt ? 1 : 0 });
}

/**
 * A whole number from `env[name]` (0 allowed only with `zero`, which then means "no bound"),
 * or `dflt` when unset.
 *
 * @example
 * const perClient = countSetting(env, "AGENTCLI_MAX_CONNECTIONS_PER_CLIENT", { default: 128, meaning: "connections one client address may hold at once", zero: "no bound" });
 */
export function countSetting(
  env: Env,
  name: string,
  opts: { default: number; meaning: string; zero?: string },
): number {
  const { default: dflt, meaning } = opts;
  const raw = env[name]?.trim();
  if (!raw) return dflt;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < (opts.zero ? 0 : 1)) {
    throw agentcliError(EnvNotCount, { name, value: raw, meaning, zero: opts.zero, fallback: dflt });
  }
  return n;
}
