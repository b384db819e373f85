/**
 * The catalogue of user-facing errors. A user error carries a code, a message in the
 * form "Cannot <action> <thing>: <state>", and a hint that says the fix. User errors are
 * not bugs: the CLI prints message and hint and exits 1; the server answers with the
 * error's own HTTP status. Anything else is a bug and keeps its stack.
 *
 * @example
 * throw agentcliError(EnvNotSeconds, { name, value: raw, meaning, fallback: 30 });
 * throw userError("PLUGIN_FAILED", { message: `Cannot reach my-service: ...`, hint: "..." }); // a third-party plugin's own error
 */
import { ERROR_CODES, type ErrorCode, type ErrorData, type ErrorValues, FileFailed } from "./errors-data.ts";

/** One problem found in a project, tied to a file (and line when there is one). */
export interface Diagnostic {
  file: string;
  line?: number;
  column?: number;
  message: string;
  hint?: string;
}

export type { ErrorCode } from "./errors-data.ts";

/** An expected error: shown to the user as message + hint, never with a stack. */
export class AgentcliError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;
  readonly diagnostics: Diagnostic[];
  readonly status: number;

  constructor(
    code: ErrorCode,
    opts: { message: string; hint?: string; diagnostics?: Diagnostic[]; status?: number; cause?: unknown },
  ) {
    super(opts.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "AgentcliError";
    this.code = code;
    this.hint = opts.hint;
    this.diagnostics = opts.diagnostics ?? [];
    this.status = opts.status ?? ERROR_CODES[code].status;
  }
}

/** What a user error may carry besides its message and hint. */
export interface ErrorExtras {
  diagnostics?: Diagnostic[];
  status?: number;
  cause?: unknown;
}

/**
 * A user error from a catalogue entry of `errors-data.ts` and its values (checked by type:
 * an entry whose message and hint take no values takes none).
 *
 * @example
 * throw agentcliError(EnvInvalid, { action: "start the server", name, value, problem: "is not a role", fix: "Use api, worker or all." });
 */
export function agentcliError<E extends ErrorData>(
  entry: E,
  // `{}` here is the type-level test "every value is optional", not an object type.
  // deno-lint-ignore ban-types
  ...[values, extras]: {} extends ErrorValues<E> ? [values?: ErrorValues<E>, extras?: ErrorExtras]
    : [values: ErrorValues<E>, extras?: ErrorExtras]
): AgentcliError {
  const text = (
    t: string | ((v: never) => string) | undefined,
  ) => (typeof t === "function" ? (t as (v: unknown) => string)(values ?? {}) : t);
  return new AgentcliError(entry.code, {
    ...extras,
    message: text(entry.message) ?? "",
    hint: text(entry.hint) || undefined,
  });
}

/** The exit code of the CLI for a user error: 2 for a wrong command line, 1 otherwise. */
export function exitCodeOf(err: AgentcliError): 1 | 2 {
  return ERROR_CODES[err.code].exit;
}

/** Creates a user error with its message and hint written at the call site (prefer {@link agentcliError}). */
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

const SYSTEM_PHRASES: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exceeded",
  ENOTDIR: "a part of the path is a file, not a folder",
  EISDIR: "it is a folder, not a file",
  ENAMETOOLONG: "the name is too long",
  ENOENT: "it does not exist",
  EEXIST: "a file of that name exists",
  ELOOP: "too many symbolic links",
  EMFILE: "too many open files",
};

/** An operating-system error as a short phrase ("permission denied"), without the syscall and path Node adds. */
export function systemErrorPhrase(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return (e?.code && SYSTEM_PHRASES[e.code]) ?? (err instanceof Error ? err.message : String(err));
}

/**
 * A file-system error on a path (a folder that is a file, a read-only disk, ...) as a user
 * error: the environment's problem, not a bug, so the CLI prints one line instead of a stack.
 * Null for anything else.
 */
export function fromSystemError(err: unknown): AgentcliError | null {
  const e = err as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof e.code !== "string" || !SYSTEM_PHRASES[e.code] || typeof e.path !== "string") {
    return null;
  }
  const verbs: Record<string, string> = {
    open: "open",
    mkdir: "create the folder",
    rename: "write",
    write: "write",
    read: "read",
    unlink: "remove",
    rmdir: "remove",
    scandir: "list",
    stat: "read",
    lstat: "read",
  };
  const action = verbs[e.syscall ?? ""] ?? "use";
  return agentcliError(FileFailed, { action, path: e.path, reason: systemErrorPhrase(err) }, { cause: err });
}
