/**
 * Errors of the control-plane API. Every answer that is not a success carries
 * `{"detail": "..."}`; an invalid body or query carries `{"detail": [{loc, msg, type}, ...]}`
 * with status 422. These are user errors from the catalogue (`core/kernel/errors/platform.ts`).
 *
 * @example
 * throw notFound("deployment", id);
 * throw invalid([{ loc: ["body", "source"], msg: "...", type: "value_error" }]);
 */
import {
  AgentcliError,
  agentcliError,
  notFound,
  PlatformRequestInvalid,
  PlatformUniqueNameTaken,
} from "../../kernel/index.ts";

export interface FieldError {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** A 422 that lists each invalid field. */
export class RequestInvalid extends AgentcliError {
  readonly detail: FieldError[];
  constructor(detail: FieldError[]) {
    const fields = detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; ");
    const entry = agentcliError(PlatformRequestInvalid, { fields });
    super(entry.code, { message: entry.message, hint: entry.hint, status: 422 });
    this.detail = detail;
  }
}

export function invalid(detail: FieldError[]): RequestInvalid {
  return new RequestInvalid(detail);
}

/** One invalid field. */
export function invalidField(loc: Array<string | number>, msg: string, type = "value_error"): RequestInvalid {
  return new RequestInvalid([{ loc, msg, type }]);
}

/** `<thing> "<id>" not found` (404): the Agent API's own. */
export { notFound };

/** The JSON body and status for an error thrown while handling a request. */
export function errorBody(err: unknown): { status: number; body: { detail: string | FieldError[] } } | null {
  if (err instanceof RequestInvalid) return { status: 422, body: { detail: err.detail } };
  if (err instanceof AgentcliError) return { status: err.status, body: { detail: err.message } };
  // Two requests racing past the same uniqueness check: the database has the last word.
  if ((err as { code?: unknown } | null)?.code === "23505") {
    return { status: 409, body: { detail: agentcliError(PlatformUniqueNameTaken).message } };
  }
  return null;
}
