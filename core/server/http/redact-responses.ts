/**
 * The way out of every HTTP response: bodies in a text form (JSON, server-sent events, NDJSON,
 * plain text, HTML) pass through core/kernel/redact.ts, whole or, for streams, as they flow. Routes
 * need not redact on their own: the Agent API, MCP, A2A, the UI's pages and error answers all
 * leave through here. Binary bodies and the UI's scripts and styles are let through as they are.
 *
 * @example
 * app.use(redactResponses());
 */
import type { MiddlewareHandler } from "hono";
import { redact, redactingStream } from "../../kernel/index.ts";

// Data, not code: the UI's scripts and styles carry no secrets, and a credential-shaped
// pattern must never rewrite code that happens to look like `password: x.password`.
const TEXT =
  /^(?:text\/(?:plain|html|event-stream|csv|markdown)|application\/(?:[\w.+-]*\+)?(?:json|x-ndjson|jsonl|xml))\b/i;
const STREAMED = /^(?:text\/event-stream|application\/(?:x-ndjson|jsonl))\b/i;

/** Hono middleware that redacts secrets from every text response body (see the module comment). */
export function redactResponses(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const res = c.res;
    const type = res.headers.get("content-type") ?? "";
    if (!res.body || !TEXT.test(type)) return;
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    const body = STREAMED.test(type) ? res.body.pipeThrough(redactingStream()) : redact(await res.text());
    // Cleared first: Hono's setter would copy the old headers (content-length among them) onto the new response.
    c.res = undefined;
    c.res = new Response(body, { status: res.status, statusText: res.statusText, headers });
  };
}
