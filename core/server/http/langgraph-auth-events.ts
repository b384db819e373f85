/**
 * The events of LangGraph custom auth, raised before each Agent API route (./langgraph-auth.ts
 * runs the handlers). Per route: the event (`threads:read`, ...) and its value, built from the
 * body, the path and the query as LangGraph's server builds them. After the handler:
 * - a rewritten value (`metadata`, a store `namespace`/`key`) replaces the body's fields, so
 *   the route creates what the handler wrote (e.g. `metadata.owner`);
 * - filters on a route naming one thread, assistant or cron: the record is looked up and, when
 *   it exists but its metadata does not pass them, the request answers 404 as if it did not
 *   exist (a run on a thread, its state and history are `threads:*` events of that thread);
 *   joining a run's stream opens the stream and carries that 404 as an error event;
 * - filters on a search or count, and on creating a thread or assistant: the storage scope
 *   holds them (`Scope.match`, applied in SQL), so an existing id they hide is 409 on create;
 * - a stateless run (`/runs`, each item of `/runs/batch`: one event per item) creates its own
 *   thread: its filters have nothing to apply to, as on LangGraph's server;
 * - filters on the store apply to the item (./langgraph-auth-store.ts).
 */
import type { Context, MiddlewareHandler } from "hono";
import { agentcliError, NotFound } from "../../kernel/index.ts";
import type { ServerDeps } from "../deps.ts";
import type { AppEnv } from "./auth-middleware.ts";
import { sseResponse } from "./sse.ts";
import { checkStoreItem } from "./langgraph-auth-store.ts";
import {
  type AuthFilters,
  authorizeEvent,
  filtersAsContainment,
  type LangGraphAuth,
  matchesFilters,
} from "./langgraph-auth.ts";

/** What a route's filters apply to; "join": a thread's run stream; "none": nothing (the event only). */
type Target = "thread" | "assistant" | "cron" | "store" | "search" | "join" | "none";
type Value = (b: Record<string, unknown>, id: string | undefined, q: URLSearchParams) => Record<string, unknown>;

interface Route {
  method: string;
  path: RegExp;
  event: string;
  target: Target;
  value: Value;
  /** Body fields the handler may rewrite. */
  rewrite?: string[];
  /** The body is an array: one event per item (`/runs/batch`). */
  each?: boolean;
}

const ID = "([^/]+)";
const pick = (...keys: string[]): Value => (b) => Object.fromEntries(keys.map((k) => [k, b[k]]));
const threadId: Value = (_b, id) => ({ thread_id: id });
const run: Value = (b, id) => ({
  thread_id: id ?? null,
  assistant_id: b.assistant_id,
  run_id: null,
  status: "pending",
  metadata: b.metadata ?? {},
  multitask_strategy: b.multitask_strategy,
  if_not_exists: b.if_not_exists,
  after_seconds: b.after_seconds,
  kwargs: b,
});
const query = (q: URLSearchParams) => ({
  namespace: (q.get("namespace") ?? "").split(".").filter(Boolean),
  key: q.get("key"),
});

function r(
  [method, path, event, target]: [string, string, string, Target],
  value: Value,
  rewrite?: string[],
  each?: boolean,
): Route {
  return { method, path: new RegExp(`^${path.replaceAll(":id", ID)}$`), event, target, value, rewrite, each };
}

/** Every route under auth, in the order they are tried. */
const ROUTES: Route[] = [
  r(
    ["POST", "/assistants", "assistants:create", "search"],
    pick("assistant_id", "graph_id", "config", "context", "metadata", "if_exists", "name", "description"),
    ["metadata"],
  ),
  r(
    ["POST", "/assistants/(?:search|count)", "assistants:search", "search"],
    pick("graph_id", "metadata", "limit", "offset"),
  ),
  r(["PATCH", "/assistants/:id", "assistants:update", "assistant"], (b, id) => ({
    ...pick("metadata", "config", "context", "graph_id", "name", "description")(b, id, new URLSearchParams()),
    assistant_id: id,
  }), ["metadata"]),
  r(
    ["POST", "/assistants/:id/latest", "assistants:update", "assistant"],
    (b, id) => ({ assistant_id: id, version: b.version }),
  ),
  r(["DELETE", "/assistants/:id", "assistants:delete", "assistant"], (_b, id) => ({ assistant_id: id })),
  r(
    ["(?:GET|POST)", "/assistants/:id(?:/.*)?", "assistants:read", "assistant"],
    (_b, id) => ({ assistant_id: id }),
  ),
  r(["POST", "/threads", "threads:create", "search"], pick("thread_id", "metadata", "if_exists"), [
    "metadata",
  ]),
  r(
    ["POST", "/threads/(?:search|count)", "threads:search", "search"],
    pick("ids", "status", "metadata", "values", "limit", "offset"),
  ),
  r(["POST", "/threads/prune", "threads:delete", "search"], pick("thread_ids")),
  r(
    ["PATCH", "/threads/:id", "threads:update", "thread"],
    (b, id) => ({ thread_id: id, metadata: b.metadata }),
    [
      "metadata",
    ],
  ),
  r(["DELETE", "/threads/:id", "threads:delete", "thread"], threadId),
  r(["DELETE", "/threads/:id/runs/([^/]+)", "threads:delete", "thread"], threadId),
  r(["POST", "/threads/:id/runs(?:/stream|/wait)?", "threads:create_run", "thread"], run, ["metadata"]),
  r(
    ["POST", "/threads/:id/runs/crons", "crons:create", "thread"],
    (b, id) => ({ ...pick("schedule", "end_time")(b, id, new URLSearchParams()), thread_id: id, payload: b }),
    ["metadata"],
  ),
  r(
    ["POST", "/threads/:id/runs/[^/]+/cancel", "threads:update", "thread"],
    (_b, id) => ({ thread_id: id, action: "interrupt" }),
  ),
  r(["(?:POST|PATCH)", "/threads/:id/state(?:/.*)?", "threads:update", "thread"], threadId),
  r(["GET", "/threads/:id/runs/[^/]+/stream", "threads:read", "join"], threadId),
  r(["(?:GET|POST)", "/threads/:id(?:/.*)?", "threads:read", "thread"], threadId),
  r(
    ["POST", "/runs(?:/stream|/wait)?", "threads:create_run", "none"],
    (b) => run(b, undefined, new URLSearchParams()),
    ["metadata"],
  ),
  r(
    ["POST", "/runs/batch", "threads:create_run", "none"],
    (b) => run(b, undefined, new URLSearchParams()),
    ["metadata"],
    true,
  ),
  r(["GET", "/runs/[^/]+/stream", "threads:read", "none"], () => ({ thread_id: null })),
  r(
    ["POST", "/runs/cancel", "threads:update", "search"],
    (b) => ({ thread_id: b.thread_id ?? null, action: "interrupt" }),
  ),
  r(
    ["POST", "/runs/crons", "crons:create", "search"],
    (b) => ({ ...pick("schedule", "end_time")(b, undefined, new URLSearchParams()), payload: b }),
    ["metadata"],
  ),
  r(
    ["POST", "/runs/crons/(?:search|count)", "crons:search", "search"],
    pick("assistant_id", "thread_id", "limit", "offset"),
  ),
  r(
    ["PATCH", "/runs/crons/:id", "crons:update", "cron"],
    (b, id) => ({ cron_id: id, payload: b, schedule: b.schedule }),
    ["metadata"],
  ),
  r(["DELETE", "/runs/crons/:id", "crons:delete", "cron"], (_b, id) => ({ cron_id: id })),
  r(["GET", "/runs/crons/:id", "crons:read", "cron"], (_b, id) => ({ cron_id: id })),
  r(["PUT", "/store/items", "store:put", "store"], pick("namespace", "key", "value"), ["namespace", "key", "value"]),
  r(["DELETE", "/store/items", "store:delete", "store"], pick("namespace", "key"), ["namespace", "key"]),
  r(["GET", "/store/items", "store:get", "store"], (_b, _id, q) => query(q)),
  r(
    ["POST", "/store/items/search", "store:search", "store"],
    (b) => ({ namespace: b.namespace_prefix, filter: b.filter, limit: b.limit, offset: b.offset, query: b.query }),
  ),
  r(
    ["POST", "/store/namespaces", "store:list_namespaces", "store"],
    (b) => ({ namespace: b.prefix, suffix: b.suffix, max_depth: b.max_depth, limit: b.limit, offset: b.offset }),
  ),
];

function routeOf(method: string, path: string): { route: Route; id: string | undefined } | null {
  for (const route of ROUTES) {
    if (!new RegExp(`^${route.method}$`).test(method)) continue;
    const m = route.path.exec(path);
    if (m) return { route, id: m[1] === undefined ? undefined : decodeURIComponent(m[1]) };
  }
  return null;
}

/** The JSON body (an object, or an array of objects for a batch), `{}` when there is none or it does not parse (the route then answers its own error). */
async function bodyOf(c: Context<AppEnv>, each: boolean): Promise<Record<string, unknown> | Record<string, unknown>[]> {
  if (!["POST", "PUT", "PATCH", "DELETE"].includes(c.req.method)) return {};
  try {
    const parsed = JSON.parse(await c.req.text());
    if (each && Array.isArray(parsed)) {
      return parsed.map((x) => x && typeof x === "object" && !Array.isArray(x) ? x : {});
    }
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** 404 when the record the route names exists but does not pass the filters (as LangGraph: hidden, not refused). */
async function checkTarget(deps: ServerDeps, o: { target: Target; id: string; filters: AuthFilters }): Promise<void> {
  const { storage } = deps;
  const found = o.target === "thread" || o.target === "join"
    ? { thing: "Thread", rec: await storage.threads.get(o.id) }
    : o.target === "assistant"
    ? { thing: "Assistant", rec: await storage.assistants.resolve(o.id) }
    : { thing: "Cron", rec: await storage.crons.get(o.id) };
  if (found.rec && !matchesFilters(found.rec.metadata as Record<string, unknown>, o.filters)) {
    throw agentcliError(NotFound, { thing: found.thing, id: o.id });
  }
}

/** Runs the route's handler on one body (an item of a batch): its filters; the body takes the rewritten fields. */
async function authorizeBody(
  auth: LangGraphAuth,
  c: Context<AppEnv>,
  o: { route: Route; id: string | undefined; body: Record<string, unknown> },
): Promise<{ filters: AuthFilters | null; value: Record<string, unknown> }> {
  const value = o.route.value(o.body, o.id, new URL(c.req.url).searchParams);
  const filters = await authorizeEvent(auth, { event: o.route.event, user: c.get("user") ?? null, value });
  for (const k of o.route.rewrite ?? []) if (value[k] !== undefined) o.body[k] = value[k];
  return { filters, value };
}

/** What a store event's filters do: checks on the item (get, put, delete), or the listing's filter. */
async function applyStoreFilters(
  deps: ServerDeps,
  c: Context<AppEnv>,
  o: { event: string; filters: AuthFilters; value: Record<string, unknown> },
): Promise<void> {
  if (o.event === "store:search" || o.event === "store:list_namespaces") return void c.set("storeAuth", o.filters);
  const namespace = Array.isArray(o.value.namespace) ? o.value.namespace.map(String) : [];
  const key = typeof o.value.key === "string" ? o.value.key : "";
  await checkStoreItem(deps, {
    event: o.event,
    user: c.get("user") ?? null,
    filters: o.filters,
    namespace,
    key,
    value: o.value.value,
  });
}

/** A `store:get` reads the item its handler named: a rewritten namespace or key replaces the query's. */
function rewriteQuery(c: Context<AppEnv>, value: Record<string, unknown>): void {
  const url = new URL(c.req.url);
  if (Array.isArray(value.namespace)) url.searchParams.set("namespace", value.namespace.join("."));
  if (typeof value.key === "string") url.searchParams.set("key", value.key);
  if (url.href !== c.req.url) c.req.raw = new Request(url, c.req.raw);
}

/** The stream of a join whose thread the filters hide: opened, carrying the not-found error (as LangGraph's server). */
function hiddenStream(): Response {
  return sseResponse((async function* () {
    yield { id: 1, event: "error", data: JSON.stringify({ error: "NotFound", message: "404: Thread not found" }) };
  })());
}

/** Runs LangGraph's `on` handlers before each Agent API route (after `authenticate`). */
export function langgraphAuthMiddleware(auth: LangGraphAuth, deps: ServerDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const found = routeOf(c.req.method, c.req.path);
    if (!found) return await next();
    const { route, id } = found;
    const body = await bodyOf(c, route.each === true);
    const before = JSON.stringify(body);
    // A batch raises the event once per item (its filters have nothing to apply to: each run makes its thread).
    const items = Array.isArray(body) ? body : [body];
    const results = [];
    for (const item of items) results.push(await authorizeBody(auth, c, { route, id, body: item }));
    if (JSON.stringify(body) !== before) {
      // Hono keeps the body read as a promise: the route's `c.req.text()` reads the rewritten one.
      c.req.bodyCache = { text: Promise.resolve(JSON.stringify(body)) as never };
    }
    const { filters, value } = results[0] ?? { filters: null, value: {} };
    if (route.event === "store:get") rewriteQuery(c, value);
    if (!filters || route.target === "none") return await next();
    if (route.target === "store") await applyStoreFilters(deps, c, { event: route.event, filters, value });
    else if (route.target === "search") c.set("authMatch", filtersAsContainment(filters));
    else if (id) {
      try {
        await checkTarget(deps, { target: route.target, id, filters });
      } catch (err) {
        if (route.target === "join") return hiddenStream();
        throw err;
      }
    }
    await next();
  };
}
