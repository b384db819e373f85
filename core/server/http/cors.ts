/**
 * CORS for the agent server, so a browser app on another origin (a local studio, the
 * deep-agents UI, a React app with `useStream`) can call it. Only allowed origins get CORS
 * headers; a preflight from any other origin is a 403, and its simple requests get nothing a
 * script could read (bodies not sent as JSON stay a 415, see http-errors.ts `jsonBody`).
 *
 * @example
 * const settings = corsFromEnv(process.env, "serve"); // throws a user error on `*` with credentials
 * app.use(corsMiddleware(settings));
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { agentcliError, EnvListEntryInvalid, EnvMismatch, EnvNotTrueFalse } from "../../kernel/index.ts";

export interface CorsSettings {
  /** Exact origins allowed, or `*` for any. */
  origins: string[];
  /** Also allow any `http://localhost[:port]`, `http://127.0.0.1[:port]` or `http://[::1][:port]` (dev). */
  allowLoopback: boolean;
  /** Request headers allowed; empty means whatever the preflight asks for. */
  headers: string[];
  credentials: boolean;
}

/** Response headers a browser script may read: those the LangGraph SDK and UIs use. */
export const CORS_EXPOSE_HEADERS = [
  "Content-Location",
  "Location",
  "X-Pagination-Next",
  "X-Pagination-Truncated",
  "Retry-After",
  "WWW-Authenticate",
];

/** Seconds a browser may cache a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

const LOOPBACK = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

function list(raw: string | undefined): string[] {
  return (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
}

/**
 * The CORS settings from `CORS_ALLOW_ORIGINS`, `CORS_ALLOW_HEADERS` and
 * `CORS_ALLOW_CREDENTIALS`; under `dev` loopback origins are allowed as well.
 */
export function corsFromEnv(env: Record<string, string | undefined>, mode: "dev" | "serve"): CorsSettings {
  const origins = list(env.CORS_ALLOW_ORIGINS).map((o) => (o === "*" ? o : o.replace(/\/+$/, "")));
  for (const o of origins) {
    if (o !== "*" && !/^https?:\/\/[^/\s]+$/.test(o)) {
      throw agentcliError(EnvListEntryInvalid, {
        name: "CORS_ALLOW_ORIGINS",
        entry: o,
        expected: "an origin",
        fix:
          "List origins as scheme://host[:port] separated by commas (e.g. https://app.example.com,http://localhost:3000), or *.",
      });
    }
  }
  const rawCred = env.CORS_ALLOW_CREDENTIALS?.trim().toLowerCase() ?? "";
  if (rawCred && !["true", "false", "1", "0"].includes(rawCred)) {
    throw agentcliError(EnvNotTrueFalse, {
      name: "CORS_ALLOW_CREDENTIALS",
      value: env.CORS_ALLOW_CREDENTIALS ?? "",
      fix:
        "Set it to true to let browsers send cookies and Authorization to the server from allowed origins (default false).",
    });
  }
  const credentials = rawCred === "true" || rawCred === "1";
  if (credentials && origins.includes("*")) {
    throw agentcliError(EnvMismatch, {
      action: "start the server",
      problem:
        "CORS_ALLOW_ORIGINS is * while CORS_ALLOW_CREDENTIALS is true (any website could act with a visitor's credentials)",
      fix: "List the allowed origins in CORS_ALLOW_ORIGINS instead of *, or leave CORS_ALLOW_CREDENTIALS unset.",
    });
  }
  const headers = list(env.CORS_ALLOW_HEADERS);
  return { origins, allowLoopback: mode === "dev", headers: headers.includes("*") ? [] : headers, credentials };
}

/** Whether `origin` may call the server. */
export function corsAllows(settings: CorsSettings, origin: string): boolean {
  return settings.origins.includes("*") || settings.origins.includes(origin) ||
    (settings.allowLoopback && LOOPBACK.test(origin));
}

/** The middleware: CORS headers for allowed origins, a 403 for other origins' preflights. */
export function corsMiddleware(settings: CorsSettings): MiddlewareHandler {
  const any = settings.origins.includes("*") && !settings.credentials;
  const allowed = cors({
    origin: (origin) => (any ? "*" : origin),
    allowHeaders: settings.headers,
    credentials: settings.credentials || undefined,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
  });
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (!origin) return next();
    if (corsAllows(settings, origin)) return allowed(c, next);
    if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method")) {
      return c.json(
        { detail: `Cannot answer the preflight: the origin ${origin} is not allowed (CORS_ALLOW_ORIGINS)` },
        403,
      );
    }
    await next();
    c.header("Vary", "Origin", { append: true });
  };
}
