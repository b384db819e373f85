/**
 * Usage budgets and rate limits: tokens and cost per UTC day, runs per minute, per user (an
 * anonymous visitor per browser cookie, and per client address too) and per deployment. Each
 * has its variable; `anonymous` deployments get defaults that bound what one visitor, one
 * address and everyone together can spend. The platform API key (the deployment's owner) is
 * bound only by the deployment-wide limits. Counters are in the database
 * (../../storage/usage.ts): every replica reads and raises the same ones.
 *
 * @example
 * const limits = usageLimitsFromEnv(env, { anonymous: true });
 */
import { createHash } from "node:crypto";
import { agentcliError, type AuthUser, EnvInvalid } from "../../kernel/index.ts";

/** The budgets and rate limits (0: none). */
export interface UsageLimits {
  userTokensPerDay: number;
  userCostPerDay: number;
  userRunsPerMinute: number;
  clientTokensPerDay: number;
  clientRunsPerMinute: number;
  deploymentTokensPerDay: number;
  deploymentCostPerDay: number;
  deploymentRunsPerMinute: number;
}

/** One limit: its variable, what it bounds (for messages), the counter it reads, and its defaults. */
export interface UsageLimitSetting {
  key: keyof UsageLimits;
  env: string;
  /** "the daily token budget of one user", as messages name it. */
  names: string;
  scope: "user" | "client" | "deployment";
  measure: "tokens" | "cost_usd" | "runs";
  /** Default of `anonymous` deployments; of the others. */
  anonymous: number;
  other: number;
}

/** Every limit, in the order of the docs. */
export const USAGE_LIMIT_SETTINGS: readonly UsageLimitSetting[] = [
  lim({
    key: "userTokensPerDay",
    env: "AGENTCLI_USER_TOKENS_PER_DAY",
    names: "the daily token budget of one user",
    anonymous: 200_000,
  }),
  lim({
    key: "userCostPerDay",
    env: "AGENTCLI_USER_COST_PER_DAY",
    names: "the daily cost budget (USD) of one user",
    anonymous: 0,
  }),
  lim({
    key: "userRunsPerMinute",
    env: "AGENTCLI_USER_RUNS_PER_MINUTE",
    names: "the runs per minute of one user",
    anonymous: 10,
  }),
  lim({
    key: "clientTokensPerDay",
    env: "AGENTCLI_CLIENT_TOKENS_PER_DAY",
    names: "the daily token budget of one client address",
    anonymous: 1_000_000,
  }),
  lim({
    key: "clientRunsPerMinute",
    env: "AGENTCLI_CLIENT_RUNS_PER_MINUTE",
    names: "the runs per minute of one client address",
    anonymous: 30,
  }),
  lim({
    key: "deploymentTokensPerDay",
    env: "AGENTCLI_DEPLOYMENT_TOKENS_PER_DAY",
    names: "the deployment's daily token budget",
    anonymous: 5_000_000,
  }),
  lim({
    key: "deploymentCostPerDay",
    env: "AGENTCLI_DEPLOYMENT_COST_PER_DAY",
    names: "the deployment's daily cost budget (USD)",
    anonymous: 0,
  }),
  lim({
    key: "deploymentRunsPerMinute",
    env: "AGENTCLI_DEPLOYMENT_RUNS_PER_MINUTE",
    names: "the deployment's runs per minute",
    anonymous: 0,
  }),
];

function lim(o: { key: keyof UsageLimits; env: string; names: string; anonymous: number }): UsageLimitSetting {
  const { key, env, names, anonymous } = o;
  const scope = key.startsWith("user") ? "user" : key.startsWith("client") ? "client" : "deployment";
  const measure = key.endsWith("TokensPerDay") ? "tokens" : key.endsWith("CostPerDay") ? "cost_usd" : "runs";
  return { key, env, names, scope, measure, anonymous, other: 0 };
}

/** No limit at all (deployments that are not `anonymous`, unless variables set some). */
export const NO_USAGE_LIMITS: UsageLimits = defaults(false);

/** The defaults of an `anonymous` deployment. */
export const ANONYMOUS_USAGE_LIMITS: UsageLimits = defaults(true);

function defaults(anonymous: boolean): UsageLimits {
  return Object.fromEntries(USAGE_LIMIT_SETTINGS.map((s) => [s.key, anonymous ? s.anonymous : s.other])) as never;
}

/** The limits: the posture's defaults under the variables set; a malformed one is a user error naming it. */
export function usageLimitsFromEnv(env: Record<string, string | undefined>, o: { anonymous: boolean }): UsageLimits {
  const out: UsageLimits = { ...(o.anonymous ? ANONYMOUS_USAGE_LIMITS : NO_USAGE_LIMITS) };
  for (const s of USAGE_LIMIT_SETTINGS) {
    const raw = env[s.env]?.trim();
    if (!raw) continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) {
      throw agentcliError(EnvInvalid, {
        action: "start the server",
        name: s.env,
        value: raw,
        problem: "is not a number of zero or more",
        fix: `Set it to a number (${s.measure === "cost_usd" ? "USD" : s.measure}); 0 for no limit.`,
      });
    }
    out[s.key] = n;
  }
  return out;
}

/** Whether any limit is set (else admission reads and counts nothing). */
export function anyUsageLimit(l: UsageLimits): boolean {
  return Object.values(l).some((v) => v > 0);
}

/** Who a run's usage is counted for: its user key, its client address key, and whether user limits apply. */
export interface UsageSubject {
  /** `user:<id>`, `owner` (the platform API key), `browser:<hash>` (an anonymous visitor's cookie) or `client:<hash>`. */
  user: string;
  /** `client:<hash>` of an anonymous caller's address; null for authenticated callers. */
  client: string | null;
  /** The deployment's owner: only deployment-wide limits apply. */
  owner?: boolean;
}

/** The request's client: its address (normalized: an IPv6 /64) and the chat UI's browser cookie. */
export interface RequestClient {
  address?: string | null;
  browserId?: string | null;
}

const hash = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 16);

/** The subject of a request's runs (anonymous callers by cookie, else address; both hashed). */
export function usageSubject(user: AuthUser | null, client: RequestClient | undefined): UsageSubject {
  // The platform API key (shared and authenticated); the anonymous handler is shared but not authenticated.
  if (user?.shared && user.isAuthenticated) return { user: "owner", client: null, owner: true };
  if (user?.isAuthenticated) return { user: `user:${user.identity}`, client: null };
  const address = client?.address ? `client:${hash(client.address)}` : null;
  const browser = client?.browserId ? `browser:${hash(client.browserId)}` : null;
  return { user: browser ?? address ?? "anonymous", client: address };
}

/** The counter key of a limit for a subject (null: the limit does not apply to it). */
export function counterKey(s: UsageLimitSetting, subject: UsageSubject): string | null {
  const window = s.measure === "runs" ? "minute" : "day";
  if (s.scope === "deployment") return `${window}:deployment`;
  if (subject.owner) return null;
  if (s.scope === "user") return `${window}:user:${subject.user}`;
  return subject.client ? `${window}:client:${subject.client}` : null;
}

/** "1234" tokens, "$0.42", "10 runs": a counter's value as messages show it. */
export function describeAmount(s: UsageLimitSetting, v: number): string {
  if (s.measure === "cost_usd") return `$${v < 1 ? Number(v.toPrecision(3)) : v.toFixed(2)}`;
  return `${Math.round(v)} ${s.measure === "tokens" ? "tokens" : "runs"}`;
}

/** Seconds until the window of a limit starts again (the next UTC day, the next minute). */
export function secondsToReset(s: UsageLimitSetting, now = new Date()): number {
  if (s.measure === "runs") return Math.max(1, 60 - now.getUTCSeconds());
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** "in 42 s", "in 3 h 12 min": when to retry. */
export function describeWait(seconds: number): string {
  if (seconds < 120) return `in ${seconds} s`;
  const h = Math.floor(seconds / 3600);
  const m = Math.ceil((seconds % 3600) / 60);
  return h ? `in ${h} h ${m} min (at 00:00 UTC)` : `in ${m} min`;
}
