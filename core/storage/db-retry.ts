/**
 * Weathering a PostgreSQL restart or failover: a statement that fails because the database is
 * unreachable for a moment (connection refused or cut, "the database system is starting up")
 * is retried with backoff for a bounded time, then fails with a 503 `SERVICE_UNREACHABLE`
 * that tells clients when to retry. Background work (runs, checkpoints, leases) waits up to
 * `AGENTCLI_DB_RETRY_SECONDS` (default 60) so a run whose work finished is still recorded
 * once the database is back; an HTTP request waits up to {@link REQUEST_RETRY_MS}, then
 * answers 503 with `Retry-After`, never a bare 500.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { type AgentcliError, agentcliError, DatabaseUnreachable } from "../kernel/index.ts";

/** Default seconds background work retries a statement while the database is unreachable. */
export const DEFAULT_DB_RETRY_SECONDS = 60;
/** How long a request's statements are retried before it is answered 503. */
export const REQUEST_RETRY_MS = 2000;
/** The `Retry-After` (seconds) of a 503 for an unreachable database. */
export const DB_RETRY_AFTER_SECONDS = 5;

const budget = new AsyncLocalStorage<number>();

/** Runs `fn` with statements retried at most `ms` (e.g. {@link REQUEST_RETRY_MS} for a request). */
export function withDbRetryBudget<T>(ms: number, fn: () => T): T {
  return budget.run(ms, fn);
}

/** Runs `fn` (work a request starts but does not wait for, like a run) with the background retry time. */
export function withBackgroundRetry<T>(fn: () => T): T {
  return budget.exit(fn);
}

/** SQLSTATE classes and codes of a database that is (re)starting or gone, and socket errors. */
const TRANSIENT_CODES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const TRANSIENT_MESSAGE =
  /Connection terminated|connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|not queryable/i;

/** Whether `err` means the database is unreachable for now (worth retrying), not that the statement is wrong. */
export function isTransientDbError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (typeof e.code === "string" && TRANSIENT_CODES.has(e.code)) return true;
  return typeof e.message === "string" && TRANSIENT_MESSAGE.test(e.message);
}

/** The 503 a statement fails with once its retry time is up. */
export function databaseUnavailable(err: unknown, waitedMs: number): AgentcliError {
  return agentcliError(
    DatabaseUnreachable,
    {
      reason: (err as Error)?.message || String(err),
      seconds: Math.round(waitedMs / 100) / 10,
      retryAfter: DB_RETRY_AFTER_SECONDS,
    },
    { cause: err },
  );
}

/**
 * Runs `attempt` until it succeeds, fails with a non-transient error (thrown as is), or the
 * retry time (the caller's budget, else `defaultMs`) is up: waits 100 ms, doubling up to 2 s.
 */
export async function retryTransient<T>(defaultMs: number, attempt: () => Promise<T>): Promise<T> {
  const limit = budget.getStore() ?? defaultMs;
  const started = Date.now();
  for (let delay = 100;; delay = Math.min(delay * 2, 2000)) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransientDbError(err)) throw err;
      const waited = Date.now() - started;
      if (waited + delay > limit) throw databaseUnavailable(err, waited);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
