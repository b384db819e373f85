/**
 * The catalogue of user-facing errors. A user error carries a code, a message in the
 * form "Cannot <action> <thing>: <state>", and a hint that says the fix. User errors are
 * not bugs: the CLI prints message and hint and exits 1; the server answers with the
 * error's own HTTP status. Anything else is a bug and keeps its stack.
 *
 * @example
 * throw userError("CONFIG_INVALID", { message: `Cannot load "agent.toml": ...`, hint: "..." });
 */

/** One problem found in a project, tied to a file (and line when there is one). */
export interface Diagnostic {
  file: string;
  line?: number;
  column?: number;
  message: string;
  hint?: string;
}

export type ErrorCode =
  | "ARGS_INVALID"
  | "CONFIG_NOT_FOUND"
  | "CONFIG_INVALID"
  | "PROJECT_EXISTS"
  | "PLUGIN_INVALID"
  | "PLUGIN_FAILED"
  | "BUNDLE_INVALID"
  | "CONFIRMATION_REQUIRED"
  | "CREDENTIALS_MISSING"
  | "PORT_IN_USE"
  | "NOT_FOUND"
  | "CONFLICT"
  | "UNPROCESSABLE"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "DEPLOY_FAILED"
  | "REMOTE_FAILED";

const STATUS: Partial<Record<ErrorCode, number>> = {
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNPROCESSABLE: 422,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  ARGS_INVALID: 422,
  CONFIG_INVALID: 422,
  BUNDLE_INVALID: 422,
};

/** An expected error: shown to the user as message + hint, never with a stack. */
export class AgentcliError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;
  readonly diagnostics: Diagnostic[];
  readonly status: number;

  constructor(code: ErrorCode, opts: { message: string; hint?: string; diagnostics?: Diagnostic[]; status?: number; cause?: unknown }) {
    super(opts.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "AgentcliError";
    this.code = code;
    this.hint = opts.hint;
    this.diagnostics = opts.diagnostics ?? [];
    this.status = opts.status ?? STATUS[code] ?? 400;
  }
}

/** Creates a user error from the catalogue. */
export function userError(
  code: ErrorCode,
  opts: { message: string; hint?: string; diagnostics?: Diagnostic[]; status?: number; cause?: unknown },
): AgentcliError {
  return new AgentcliError(code, opts);
}

export function isUserError(err: unknown): err is AgentcliError {
  return err instanceof AgentcliError;
}

/** Renders one diagnostic as `file:line:col: message\n  hint: ...`. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.line ? `${d.file}:${d.line}${d.column ? `:${d.column}` : ""}` : d.file;
  return `${where}: ${d.message}${d.hint ? `\n    fix: ${d.hint}` : ""}`;
}

/**
 * Renders a user error for a terminal: the message, each diagnostic, the hint.
 * `label: false` leaves out the leading "error: " (for a logger that labels lines itself);
 * `hint` replaces the error's own hint (null: none).
 */
export function formatUserError(err: AgentcliError, opts: { label?: boolean; hint?: string | null } = {}): string {
  const lines = [`${opts.label === false ? "" : "error: "}${err.message}`];
  for (const d of err.diagnostics) lines.push(`  - ${formatDiagnostic(d).replace(/\n/g, "\n  ")}`);
  const hint = opts.hint === undefined ? err.hint : opts.hint;
  if (hint) lines.push(`hint: ${hint}`);
  return lines.join("\n");
}
