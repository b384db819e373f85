/**
 * Guards every request passes before a route: its body's size, and text in its URL that
 * storage cannot hold (NUL, unpaired surrogates) or cannot decode (a bad percent-escape):
 * a 413 or a 422, never a database error.
 *
 * @example
 * app.use(bodySizeGuard(limits));
 * app.use(urlTextGuard());
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { agentcliError, UrlEscapeMalformed, UrlTextInvalid } from "../../kernel/index.ts";
import { badText } from "./json-guard.ts";
import { overLimit, type ServerLimits } from "./limits.ts";

/** Refuses a body larger than `limits.maxBodyBytes` with a 413 naming the limit. */
export function bodySizeGuard(limits: ServerLimits): MiddlewareHandler {
  return bodyLimit({
    maxSize: limits.maxBodyBytes,
    onError: () => {
      throw overLimit(
        "maxBodyBytes",
        limits,
        "the request body is larger than allowed (large files belong in a sandbox or the store)",
      );
    },
  });
}

/** Ids and query values with text storage cannot hold (NUL, unpaired surrogates): a 422, not a database error. */
export function urlTextGuard(): MiddlewareHandler {
  return async (c, next) => {
    let path: string;
    let query: string[];
    try {
      path = decodeURIComponent(new URL(c.req.url).pathname);
      query = Object.values(c.req.queries()).flat();
    } catch {
      throw agentcliError(UrlEscapeMalformed);
    }
    const problem = badText(path) ?? query.map(badText).find(Boolean) ?? null;
    if (problem) {
      throw agentcliError(UrlTextInvalid, { problem });
    }
    await next();
  };
}
