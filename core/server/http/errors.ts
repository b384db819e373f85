/**
 * HTTP errors of the Agent API: user errors answer with their own status and
 * `{ "detail": message }` (the LangGraph Platform shape the SDK surfaces); zod failures are
 * 422 with the offending paths; anything else is a logged, generic 500 with no stack.
 */
import { authChallenge } from "../../auth/index.ts";
import type { Context } from "hono";
import { z } from "zod";
import {
  AgentcliError,
  agentcliError,
  BodyNotJson,
  clientErrorReporter,
  RequestBodyInvalid,
  RequestBodyNotParsed,
  type ServerLog,
} from "../../kernel/index.ts";
import { checkJsonText } from "./json-guard.ts";
import { DB_RETRY_AFTER_SECONDS, isTransientDbError } from "../../storage/index.ts";

export { idTaken, notFound } from "../../kernel/index.ts";

/** Parses a value with a zod schema, or throws a 422 naming what is wrong. */
export function parseBody<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const detail = r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "body"}: ${i.message}`).join("; ");
  throw agentcliError(RequestBodyInvalid, { detail });
}

/**
 * Reads a JSON body (empty body means `{}`): 415 unless it is sent as JSON (a browser on
 * another site can send text/plain or form bodies without asking first; JSON it cannot),
 * 422 when it is not valid JSON or holds text storage refuses (see json-guard.ts).
 */
export async function jsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (!text.trim()) return {};
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw agentcliError(BodyNotJson, { contentType: type }, { status: 415 });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw agentcliError(RequestBodyNotParsed, {});
  }
  checkJsonText(value);
  return value;
}

/** Seconds a client over a quota is told to wait (`Retry-After` of every 429). */
export const RETRY_AFTER_SECONDS = 10;

/** The Hono error handler. */
export function errorHandler(log: ServerLog) {
  const report = clientErrorReporter(log);
  return (err: Error, c: Context): Response => {
    // The client went away mid-request (a body never finished, a dropped connection): its
    // doing, reported as one rate-limited line, never as a failure with a stack.
    if (c.req.raw.signal?.aborted && !(err instanceof AgentcliError)) {
      report(`${c.req.method} ${new URL(c.req.url).pathname}: the client went away before the request was complete`);
      return c.json({ detail: "The request was not complete" }, 400);
    }
    if (err instanceof AgentcliError && err.code === "PLUGIN_FAILED") {
      log.error(`${c.req.method} ${new URL(c.req.url).pathname} failed: ${err.message}`, err.cause);
      return c.json({ detail: "Internal server error" }, 500);
    }
    if (err instanceof AgentcliError) {
      const challenge = authChallenge(err);
      if (challenge) c.header("WWW-Authenticate", challenge);
      if (err.status === 429) {
        const wait = (err as { retryAfterSeconds?: number }).retryAfterSeconds;
        c.header("Retry-After", String(wait ?? RETRY_AFTER_SECONDS));
      }
      if (err.code === "SERVICE_UNREACHABLE") c.header("Retry-After", String(DB_RETRY_AFTER_SECONDS));
      return c.json(
        { detail: err.message, ...(err.hint ? { hint: err.hint } : {}), code: err.code },
        err.status as 400,
      );
    }
    // The database dropped away mid-request (not retried: e.g. inside a stream): a 503 to retry, not a 500.
    if (isTransientDbError(err)) {
      c.header("Retry-After", String(DB_RETRY_AFTER_SECONDS));
      return c.json({ detail: "The database is unreachable for now; retry shortly", code: "SERVICE_UNREACHABLE" }, 503);
    }
    const status = (err as { status?: number }).status;
    if (typeof status === "number" && status >= 400 && status < 500) {
      return c.json({ detail: err.message }, status as 400);
    }
    log.error(`${c.req.method} ${new URL(c.req.url).pathname} failed`, err);
    return c.json({ detail: "Internal server error" }, 500);
  };
}
