/** What every request of the Agent API meets first (mounted by ../app.ts before any route). */
import type { Hono } from "hono";
import type { ServerLog } from "../../kernel/index.ts";
import { REQUEST_RETRY_MS, withDbRetryBudget } from "../../storage/index.ts";
import type { AppEnv } from "../http/auth-middleware.ts";
import { corsMiddleware, type CorsSettings } from "../http/cors.ts";
import { errorHandler } from "../http/errors.ts";
import type { ServerLimits } from "../http/limits.ts";
import { redactResponses } from "../http/redact-responses.ts";
import { bodySizeGuard, urlTextGuard } from "../http/request-guards.ts";

/** The error answers, redaction, CORS, the body limit, the database retry budget, the URL check. */
export function mountGuards(app: Hono<AppEnv>, o: { log: ServerLog; cors?: CorsSettings; limits: ServerLimits }): void {
  app.onError(errorHandler(o.log));
  app.notFound((c) => c.json({ detail: `Not found: ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));
  // First of all: every answer, whatever route or error made it, leaves with its secrets redacted.
  app.use(redactResponses());
  // First: a preflight carries no credentials, so it is answered before auth and the guards.
  if (o.cors) app.use(corsMiddleware(o.cors));
  app.use(bodySizeGuard(o.limits));
  // A request waits out a database restart only briefly, then answers 503 with Retry-After.
  app.use((_c, next) => withDbRetryBudget(REQUEST_RETRY_MS, next));
  app.use(urlTextGuard());
}
