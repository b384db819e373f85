/**
 * `GET /usage`: model calls' token usage and estimated cost, grouped by user, assistant,
 * model, thread or UTC day, between two times. The deployment's owner (the platform API key,
 * or every caller of a server without auth) sees everyone's and may name one `user`; any
 * other caller sees their own: a signed-in user's, an anonymous visitor's (by browser cookie,
 * else client address). A run's usage is in its record (`usage`), a thread's totals in its.
 */
import { type Context, Hono } from "hono";
import { agentcliError, type AuthUser, UsageQueryInvalid } from "../../kernel/index.ts";
import { constantTimeEqual } from "../../auth/index.ts";
import type { UsageGroup, UsageTotals } from "../../storage/index.ts";
import { usageSubject } from "../../engine/index.ts";
import type { ServerDeps } from "../deps.ts";
import { type AppEnv, userOf } from "../http/auth-middleware.ts";
import { requestClient } from "../http/client.ts";

/** The deployment's owner, as the platform API key authenticates it. */
const OWNER: AuthUser = { identity: "owner", isAuthenticated: true, shared: true };

const GROUPS: readonly UsageGroup[] = ["day", "user", "assistant", "model", "thread"];

/**
 * The `/usage` route, mounted before the auth middleware: the owner's `x-api-key` (the
 * deployment's PLATFORM_API_KEY, compared in constant time) is the owner under any identity
 * provider; any other request is authenticated as every other route's.
 */
export function usageRoutes(
  deps: ServerDeps,
  authenticate?: (req: Request) => Promise<AuthUser | null>,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/usage", async (c) => {
    const key = c.req.header("x-api-key");
    const ownerKey = deps.usage?.ownerKey;
    const owner = Boolean(ownerKey && key && (await constantTimeEqual(key, ownerKey)));
    c.set("user", owner ? OWNER : authenticate ? await authenticate(c.req.raw) : null);
    const groupBy = (c.req.query("group_by") ?? "day") as UsageGroup;
    if (!GROUPS.includes(groupBy)) {
      throw invalid("group_by", groupBy, {
        problem: "is not a grouping",
        fix: `Group by one of: ${GROUPS.join(", ")}.`,
      });
    }
    const since = time(c, "since");
    const until = time(c, "until");
    const limit = Number(c.req.query("limit") ?? 1000);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw invalid("limit", c.req.query("limit")!, {
        problem: "is not a whole number from 1 to 10000",
        fix: "Pass a smaller limit.",
      });
    }
    const user = userScope(c, deps);
    const rows = await deps.storage.usage.aggregate({ groupBy, user, since, until, limit });
    return c.json({
      group_by: groupBy,
      since: since ?? null,
      until: until ?? null,
      user,
      recording: deps.usage !== null,
      totals: sum(rows),
      rows,
    });
  });
  return app;
}

/** Whose usage the caller may read: null (everyone's) for the owner unless `user` is named; else their own key. */
function userScope(c: Context<AppEnv>, deps: ServerDeps): string | null {
  const user = userOf(c);
  const asked = c.req.query("user");
  const owner = user === null || (user.shared === true && user.isAuthenticated);
  if (owner) return asked || null;
  const own = usageSubject(user, requestClient(c, deps)).user;
  if (asked && asked !== own) {
    throw invalid("user", asked, { problem: "is not you", fix: "Leave `user` out: you can read your own usage only." });
  }
  return own;
}

function time(c: Context<AppEnv>, name: string): string | undefined {
  const raw = c.req.query(name);
  if (!raw) return undefined;
  const t = new Date(raw);
  if (Number.isNaN(t.getTime())) {
    throw invalid(name, raw, {
      problem: "is not a time",
      fix: "Pass an ISO 8601 date or time, e.g. 2026-01-31 or 2026-01-31T12:00:00Z.",
    });
  }
  return t.toISOString();
}

function invalid(name: string, raw: string, why: { problem: string; fix: string }) {
  return agentcliError(UsageQueryInvalid, { name, raw: raw.slice(0, 80), ...why }, { status: 422 });
}

function sum(rows: UsageTotals[]): UsageTotals {
  const costs = rows.filter((r) => r.cost_usd !== null);
  return {
    calls: rows.reduce((n, r) => n + r.calls, 0),
    input_tokens: rows.reduce((n, r) => n + r.input_tokens, 0),
    output_tokens: rows.reduce((n, r) => n + r.output_tokens, 0),
    total_tokens: rows.reduce((n, r) => n + r.total_tokens, 0),
    cached_input_tokens: rows.reduce((n, r) => n + r.cached_input_tokens, 0),
    reasoning_tokens: rows.reduce((n, r) => n + r.reasoning_tokens, 0),
    cost_usd: costs.length ? costs.reduce((n, r) => n + r.cost_usd!, 0) : null,
  };
}
