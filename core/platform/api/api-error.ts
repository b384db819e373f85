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
  conflict,
  notFound,
  PlatformForbidden,
  PlatformTooLarge,
  PlatformUnauthorized,
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
    super("UNPROCESSABLE", {
      message: `Cannot accept the request: ${detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; ")}`,
      status: 422,
    });
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

/** `<thing> "<id>" not found` (404) and a conflict with the current state (409): the Agent API's own. */
export { conflict, notFound };

export function forbidden(message: string): AgentcliError {
  return agentcliError(PlatformForbidden, { problem: message });
}

/** A 413: the message names the limit and the setting that raises it (`limits.ts`). */
export function payloadTooLarge(message: string): AgentcliError {
  return agentcliError(PlatformTooLarge, { problem: message }, { status: 413 });
}

export function unauthorized(message: string): AgentcliError {
  return agentcliError(PlatformUnauthorized, { problem: message });
}

/** The JSON body and status for an error thrown while handling a request. */
export function errorBody(err: unknown): { status: number; body: { detail: string | FieldError[] } } | null {
  if (err instanceof RequestInvalid) return { status: 422, body: { detail: err.detail } };
  if (err instanceof AgentcliError) return { status: err.status, body: { detail: err.message } };
  // Two requests racing past the same uniqueness check: the database has the last word.
  if ((err as { code?: unknown } | null)?.code === "23505") {
    return { status: 409, body: { detail: "Cannot create the resource: one with the same unique name exists" } };
  }
  return null;
}
