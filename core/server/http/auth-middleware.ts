/**
 * The request's user: `authMiddleware` runs the authenticator on every request and keeps its
 * answer in the Hono context (`AppEnv`); the routes read it back with `userOf`, and the
 * storage scope it owns with `scopeOf` (the scoping rules: ../../engine/runs/scope.ts).
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AuthUser } from "../../kernel/index.ts";
import type { Scope } from "../../storage/index.ts";
import { ownerOf } from "../../engine/index.ts";

/**
 * `authMatch`: LangGraph custom auth's filters of a search (./langgraph-auth-events.ts), in the
 * storage scope; `storeAuth`: a store handler's filters, which a store search or namespace
 * listing applies to each item (./langgraph-auth-store.ts).
 */
export type AppEnv = {
  Variables: {
    user: AuthUser | null;
    authMatch?: Record<string, unknown> | null;
    storeAuth?: Record<string, unknown> | null;
  };
};

/** Runs `authenticate` on every request; a thrown 401 user error refuses it. */
export function authMiddleware(authenticate?: (req: Request) => Promise<AuthUser | null>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set("user", authenticate ? await authenticate(c.req.raw) : null);
    await next();
  };
}

export function userOf(c: Context<AppEnv>): AuthUser | null {
  return c.get("user") ?? null;
}

/** The storage scope of the request's user. */
export function scopeOf(c: Context<AppEnv>): Scope {
  const match = c.get("authMatch");
  return match ? { owner: ownerOf(userOf(c)), match } : { owner: ownerOf(userOf(c)) };
}
