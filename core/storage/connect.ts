/**
 * Connecting to a database or Redis at start: retried with backoff for a bounded time
 * (`AGENTCLI_CONNECT_TIMEOUT_SECONDS`), then a clear error that names the variable and the
 * address, never the credentials.
 */
import { type AgentcliError, agentcliError, ServiceUnreachable } from "../kernel/index.ts";

/** Default seconds a server keeps trying to reach PostgreSQL and Redis at start. */
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 30;

/** What is being reached: shown in the error when it cannot be. */
export interface ConnectTarget {
  service: "PostgreSQL" | "Redis";
  /** The variable the URL came from, e.g. `DATABASE_URL`. */
  variable: string;
  url: string;
  /** How long to keep trying (0: one attempt). */
  withinMs: number;
}

/** A connection string's address without its credentials: `host:port/path`. */
export function addressOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ""}${u.pathname.length > 1 ? u.pathname : ""}`;
  } catch {
    return "(an unreadable URL)";
  }
}

/**
 * Runs `attempt` (given the time it may take, 0 for no limit) until it succeeds or the target's time is up,
 * waiting 250 ms, then doubling up to 2 s, between attempts; then throws SERVICE_UNREACHABLE.
 */
export async function connectWithin<T>(target: ConnectTarget, attempt: (timeoutMs: number) => Promise<T>): Promise<T> {
  const started = Date.now();
  const deadline = started + target.withinMs;
  for (let delay = 250;; delay = Math.min(delay * 2, 2000)) {
    try {
      // One attempt (no retry time) keeps the driver's own timeout; a retried one is bounded.
      return await attempt(target.withinMs > 0 ? Math.max(2000, Math.min(10_000, deadline - Date.now())) : 0);
    } catch (err) {
      if (Date.now() + delay >= deadline) throw unreachable(target, err, Date.now() - started);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

function unreachable(target: ConnectTarget, err: unknown, elapsedMs: number): AgentcliError {
  let reason = (err as Error)?.message || String(err);
  let password = "";
  try {
    password = decodeURIComponent(new URL(target.url).password);
  } catch { /* no password to hide */ }
  if (password) reason = reason.replaceAll(password, "***");
  return agentcliError(
    ServiceUnreachable,
    {
      service: target.service,
      address: addressOf(target.url),
      variable: target.variable,
      reason,
      seconds: Math.round(elapsedMs / 1000),
      fallback: DEFAULT_CONNECT_TIMEOUT_SECONDS,
    },
    { cause: err },
  );
}
