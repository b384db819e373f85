/**
 * The server's logger: a tiny interface so the CLI can route it to the terminal and tests
 * can silence it. Never give it secrets.
 */
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
    error: (m, e) => console.error(`[${prefix}] error: ${m}${e instanceof Error ? `\n${e.stack}` : e ? ` ${String(e)}` : ""}`),
  };
}

/** A logger that drops everything. */
export const silentLog: ServerLog = { info: () => {}, warn: () => {}, error: () => {} };
