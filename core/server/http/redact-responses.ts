/**
 * The way out of every HTTP response: bodies in a text form (JSON, server-sent events, NDJSON,
 * plain text, HTML) pass through core/kernel/redact.ts, whole or, for streams, as they flow. Routes
 * need not redact on their own: the Agent API, MCP, A2A, the UI's pages and error answers all
 * leave through here. Binary bodies and the UI's scripts and styles are let through as they are,
 * and so are run event streams (./sse.ts), redacted at their source: see {@link REDACTED_AT_SOURCE}.
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

/**
 * Set by a route whose body is redacted already, at its source; this middleware removes it and
 * lets the body through as it is. Only run event streams (./sse.ts) set it: every event's data
 * was redacted once, when the run emitted it (core/engine/executor/executor.ts), before it was
 * logged or went to another replica, and the stream redacts the rest of each frame (event names,
 * its own errors). A second pass cost 15 us per token's event (of 850 bytes), about 5% of the
 * server's CPU per streamed token (bench/README.md, `bench:tokens`).
 */
export const REDACTED_AT_SOURCE = "x-agentcli-redacted-at-source";

/** Hono middleware that redacts secrets from every text response body (see the module comment). */
export function redactResponses(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const res = c.res;
    const type = res.headers.get("content-type") ?? "";
    const atSource = res.headers.has(REDACTED_AT_SOURCE);
    if (!res.body || (!atSource && !TEXT.test(type))) return;
    const headers = new Headers(res.headers);
    headers.delete(REDACTED_AT_SOURCE);
    if (!atSource) headers.delete("content-length");
    const body = atSource
      ? res.body
      : STREAMED.test(type)
      ? res.body.pipeThrough(redactingStream())
      : redact(await res.text());
    // Cleared first: Hono's setter would copy the old headers (content-length among them) onto the new response.
    c.res = undefined;
    c.res = new Response(body, { status: res.status, statusText: res.statusText, headers });
  };
}
