/**
 * The server's logger: a tiny interface so the CLI can route it to the terminal and tests
 * can silence it. The server wraps whatever it is given in {@link redactingLog}.
 */
import { redact, redactError } from "./redact.ts";

export interface ServerLog {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
}

/** A logger that writes to stderr with a prefix. */
export function consoleLog(prefix = "agentcli"): ServerLog {
  return {
    info: (m) => console.error(`[${prefix}] ${m}`),
    warn: (m) => console.error(`[${prefix}] warning: ${m}`),
    error: (m, e) =>
      console.error(`[${prefix}] error: ${m}${e instanceof Error ? `\n${e.stack}` : e ? ` ${String(e)}` : ""}`),
  };
}

/** A logger that drops everything. */
export const silentLog: ServerLog = { info: () => {}, warn: () => {}, error: () => {} };

/** A logger that redacts secrets (see core/kernel/redact.ts) from every line and error before `log` sees them. */
export function redactingLog(log: ServerLog): ServerLog {
  return {
    info: (m) => log.info(redact(m)),
    warn: (m) => log.warn(redact(m)),
    error: (m, e) => log.error(redact(m), e === undefined ? undefined : redactError(e)),
  };
}

/**
 * Reports client errors (slow or malformed requests: the client's doing, not the server's) as
 * one line, at most one every `intervalMs`, with how many were left out since: a flood of
 * slow clients costs a few lines, never a stack trace each.
 */
export function clientErrorReporter(
  log: Pick<ServerLog, "warn"> | undefined,
  intervalMs = 10_000,
): (what: string) => void {
  let last = -Infinity;
  let skipped = 0;
  return (what) => {
    const now = performance.now();
    if (now - last < intervalMs) {
      skipped++;
      return;
    }
    last = now;
    log?.warn(`client error: ${what}${skipped ? ` (and ${skipped} more since the last report)` : ""}`);
    skipped = 0;
  };
}
