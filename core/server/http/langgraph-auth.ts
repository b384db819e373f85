/**
 * LangGraph custom auth (`auth.path` of `langgraph.json`): a module exporting an `Auth`
 * instance of `@langchain/langgraph-sdk/auth`. Its `authenticate` names the caller of every
 * non-public request; its `on` handlers, looked up as LangGraph's server does
 * (`resource:action`, then `resource`, then `*:action`, then `*`), allow (`undefined`, `null`,
 * `true`), refuse (`false`: 403) or filter (an object of metadata filters) each event, and may
 * rewrite the event's value in place (its `metadata`, a store `namespace`). An `HTTPException`
 * they throw answers with its status and message. The events each route raises and how filters
 * are applied: ./langgraph-auth-events.ts.
 */
import { pathToFileURL } from "node:url";
import {
  agentcliError,
  type AuthUser,
  LangGraphAuthAnswerInvalid,
  LangGraphAuthNotAuth,
  LangGraphAuthNotLoaded,
  LangGraphAuthRefused,
} from "../../kernel/index.ts";
import { forbidden, isPublicPath, unauthorized } from "../../auth/index.ts";

/** Where the auth module is: `HostOptions.langgraphAuth`, parsed from `auth.path`. */
export interface LangGraphAuthSpec {
  /** Absolute path of the module. */
  module: string;
  exportName: string;
  /**
   * LangGraph Studio's bypass: a request marked `x-auth-scheme: langsmith` skips `authenticate`
   * and meets the `on` handlers as the Studio user (`isStudioUser`). As LangGraph's dev server:
   * on unless `auth.disable_studio_auth`; the host turns it on under `agentcli dev` only.
   */
  studioBypass?: boolean;
}

type Handler = (arg: Record<string, unknown>) => unknown;

/** The handlers of a loaded `Auth` instance (its `~handlerCache`). */
export interface LangGraphAuth {
  authenticate?: (request: Request) => unknown;
  callbacks: Record<string, Handler>;
  studioBypass?: boolean;
}

/** Metadata filters a handler answered: `{ key: value | { $eq } | { $contains } }`. */
export type AuthFilters = Record<string, unknown>;

/** Loads the module and checks its export is an `Auth` instance (it has LangGraph's `~handlerCache`). */
export async function loadLangGraphAuth(spec: LangGraphAuthSpec): Promise<LangGraphAuth> {
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(spec.module).href);
  } catch (err) {
    throw agentcliError(LangGraphAuthNotLoaded, { ...spec, reason: (err as Error).message ?? String(err) });
  }
  if (!(spec.exportName in mod)) {
    const names = Object.keys(mod).join(", ") || "nothing";
    throw agentcliError(LangGraphAuthNotLoaded, {
      ...spec,
      reason: `it exports no "${spec.exportName}" (exports: ${names})`,
    });
  }
  const value = await mod[spec.exportName];
  const cache = value && typeof value === "object" ? (value as Record<string, unknown>)["~handlerCache"] : undefined;
  if (!cache || typeof cache !== "object") {
    const found = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    throw agentcliError(LangGraphAuthNotAuth, { ...spec, found });
  }
  const handlers = cache as { authenticate?: LangGraphAuth["authenticate"]; callbacks?: Record<string, Handler> };
  return { authenticate: handlers.authenticate, callbacks: handlers.callbacks ?? {}, studioBypass: spec.studioBypass };
}

/** An `HTTPException` of the SDK (or anything with a numeric `status` and `headers`) as our error. */
function refusal(err: unknown): unknown {
  if (!err || typeof err !== "object" || typeof (err as { status?: unknown }).status !== "number") return err;
  if (!("headers" in err)) return err;
  const status = (err as unknown as { status: number }).status;
  const message = (err as unknown as Error).message || (status === 401 ? "Unauthorized" : "Forbidden");
  if (status === 401) return unauthorized(message, { hint: "" });
  if (status === 403) return forbidden(message);
  return agentcliError(LangGraphAuthRefused, { problem: message }, { status });
}

/** Runs `authenticate` and turns its answer into our user (LangGraph's user in `langgraph`). */
export async function authenticateLangGraph(auth: LangGraphAuth, request: Request): Promise<AuthUser | null> {
  if (!auth.authenticate) return null;
  let answer: unknown;
  try {
    answer = await auth.authenticate(request);
  } catch (err) {
    throw refusal(err);
  }
  const given = typeof answer === "string" ? { identity: answer } : answer as Record<string, unknown> | null;
  if (!given || typeof given !== "object" || typeof given.identity !== "string" || !given.identity) {
    throw agentcliError(LangGraphAuthAnswerInvalid, {
      handler: "authenticate",
      got: given === null ? "null" : `a ${typeof answer} without a string identity`,
      expected: "a string or an object with a string `identity`",
    }, { status: 500 });
  }
  const permissions = Array.isArray(given.permissions) ? given.permissions.map(String) : [];
  const langgraph = {
    ...given,
    identity: given.identity,
    permissions,
    is_authenticated: given.is_authenticated ?? true,
    display_name: given.display_name ?? given.identity,
  };
  return {
    identity: given.identity,
    isAuthenticated: langgraph.is_authenticated !== false,
    displayName: String(langgraph.display_name),
    permissions,
    shared: true,
    langgraph,
  };
}

/**
 * Authorizes one event (`threads:create`, ...) of `user`: null when it is allowed without a
 * filter, the filters otherwise; throws 403 (or the handler's own refusal). `value` may be
 * rewritten in place by the handler.
 */
export async function authorizeEvent(
  auth: LangGraphAuth,
  o: { event: string; user: AuthUser | null; value: Record<string, unknown> },
): Promise<AuthFilters | null> {
  const [resource, action] = o.event.split(":");
  const key = [o.event, resource, `*:${action}`, "*"].find((k) => auth.callbacks[k]);
  if (!key || !o.user?.langgraph) return null;
  let result: unknown;
  try {
    result = await auth.callbacks[key]({
      event: o.event,
      resource,
      action,
      value: o.value,
      permissions: o.user.permissions ?? [],
      user: o.user.langgraph,
    });
  } catch (err) {
    throw refusal(err);
  }
  if (result === undefined || result === null || result === true) return null;
  if (result === false) throw forbidden("Forbidden");
  if (typeof result !== "object" || Array.isArray(result)) {
    throw agentcliError(LangGraphAuthAnswerInvalid, {
      handler: key,
      got: `a ${Array.isArray(result) ? "array" : typeof result}`,
      expected: "a filter object, true, false, null or undefined",
    }, { status: 500 });
  }
  return result as AuthFilters;
}

/** True when `metadata` passes the filters (`$eq`: equal; `$contains`: an array holding the value(s)). */
export function matchesFilters(
  metadata: Record<string, unknown> | null | undefined,
  filters: AuthFilters | null,
): boolean {
  if (!filters) return true;
  for (const [key, want] of Object.entries(filters)) {
    const have = metadata?.[key];
    if (want && typeof want === "object" && !Array.isArray(want)) {
      const op = want as { $eq?: unknown; $contains?: unknown };
      if ("$eq" in op && JSON.stringify(have) !== JSON.stringify(op.$eq)) return false;
      if ("$contains" in op) {
        if (!Array.isArray(have)) return false;
        const items = Array.isArray(op.$contains) ? op.$contains : [op.$contains];
        if (!items.every((v) => have.some((h) => JSON.stringify(h) === JSON.stringify(v)))) return false;
      }
    } else if (JSON.stringify(have) !== JSON.stringify(want)) return false;
  }
  return true;
}

/** The filters as a JSON containment (`metadata @> ...`) for a search in storage. */
export function filtersAsContainment(filters: AuthFilters | null): Record<string, unknown> | null {
  if (!filters) return null;
  const out: Record<string, unknown> = {};
  for (const [key, want] of Object.entries(filters)) {
    if (want && typeof want === "object" && !Array.isArray(want)) {
      const op = want as { $eq?: unknown; $contains?: unknown };
      if ("$eq" in op) out[key] = op.$eq;
      if ("$contains" in op) out[key] = Array.isArray(op.$contains) ? op.$contains : [op.$contains];
    } else out[key] = want;
  }
  return out;
}

/** LangGraph Studio's user (`kind: "StudioUser"`, which the SDK's `isStudioUser` recognises). */
const STUDIO_USER = {
  kind: "StudioUser",
  identity: "langgraph-studio-user",
  display_name: "langgraph-studio-user",
  permissions: [] as string[],
  is_authenticated: true,
};

/** The Studio user of a request marked as LangGraph Studio's, when the bypass is on; null otherwise. */
function studioUser(auth: LangGraphAuth, request: Request): AuthUser | null {
  if (!auth.studioBypass || request.headers.get("x-auth-scheme")?.toLowerCase() !== "langsmith") return null;
  return {
    identity: STUDIO_USER.identity,
    isAuthenticated: true,
    displayName: STUDIO_USER.display_name,
    permissions: [],
    shared: true,
    langgraph: { ...STUDIO_USER, permissions: [] },
  };
}

/**
 * The server's authenticator with LangGraph custom auth: public paths stay public; under
 * `agentcli dev`, LangGraph Studio's requests are its Studio user (unless `disable_studio_auth`);
 * an identity plugin's `authenticate` (an `[auth]` provider), when there is one, runs first and
 * its refusal stands; then LangGraph's `authenticate` names the user (without one, the plugin's
 * user stays).
 */
export function withLangGraphAuth(
  auth: LangGraphAuth,
  first: ((req: Request) => Promise<AuthUser | null>) | undefined,
): (req: Request) => Promise<AuthUser | null> {
  return async (request) => {
    if (isPublicPath(new URL(request.url).pathname)) return null;
    const studio = studioUser(auth, request);
    if (studio) return studio;
    const before = first ? await first(request) : null;
    return (await authenticateLangGraph(auth, request)) ?? before;
  };
}
