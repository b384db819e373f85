/**
 * `/store`: put, get, delete, search items and list namespaces. Without a per-user identity
 * the namespaces are the store's own, the ones graphs see (as on LangGraph's server). Under
 * an identity provider every namespace is confined under the user's identity: `["notes"]`
 * is stored as `[identity, "notes"]` (a graph reaches it there), and the identity is
 * stripped again in answers, so a client reads back exactly the namespaces it wrote.
 */
import { Hono } from "hono";
import type { Item } from "@langchain/langgraph-checkpoint";
import type { ServerDeps } from "../deps.ts";
import { jsonBody, parseBody } from "../http/errors.ts";
import { agentcliError, StoreKeyRequired, StoreNamespaceEmpty, StoreRefreshTtlInvalid } from "../../kernel/index.ts";
import * as s from "../http/schemas.ts";
import { ownerOf, userNamespace } from "../../engine/index.ts";
import { type AppEnv, userOf } from "../http/auth-middleware.ts";
import { scanAuthorized, storeItemMatches } from "../http/langgraph-auth-store.ts";

function itemToWire(item: Item & { score?: number }, strip: number): Record<string, unknown> {
  return {
    namespace: item.namespace.slice(strip),
    key: item.key,
    value: item.value,
    created_at: item.createdAt.toISOString(),
    updated_at: item.updatedAt.toISOString(),
    ...(item.score !== undefined ? { score: item.score } : {}),
  };
}

/** Whether a read refreshes TTLs: `refresh_ttl` when given, else the server's setting. */
function refreshFlag(raw: string | undefined, deps: ServerDeps): boolean {
  if (raw === undefined || raw === "") return deps.ttl.refreshOnRead;
  if (raw !== "true" && raw !== "false") {
    throw agentcliError(StoreRefreshTtlInvalid, { value: raw });
  }
  return raw === "true";
}

/** The store route group. */
export function storeRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const store = deps.storage.store;

  app.put("/items", async (c) => {
    const b = parseBody(s.storePut, await jsonBody(c));
    if (b.namespace.length === 0) throw agentcliError(StoreNamespaceEmpty, {});
    const ns = userNamespace(userOf(c), b.namespace);
    await store.put(ns, b.key, b.value, b.index ?? undefined);
    await deps.storage.ttl.setItem(ns, b.key, b.ttl);
    return c.body(null, 204);
  });

  app.get("/items", async (c) => {
    const key = c.req.query("key");
    const ns = (c.req.query("namespace") ?? "").split(".").filter(Boolean);
    if (!key) throw agentcliError(StoreKeyRequired, {});
    const user = userOf(c);
    const item = await store.get(userNamespace(user, ns), key);
    // A missing item is `null`, which the SDK's `store.getItem` expects (LangGraph's server does the same).
    if (!item) return c.json(null);
    if (refreshFlag(c.req.query("refresh_ttl"), deps)) {
      await deps.storage.ttl.refreshItems([item], deps.ttl.storeTtlMinutes);
    }
    return c.json(itemToWire(item, ownerOf(user) ? 1 : 0));
  });

  app.delete("/items", async (c) => {
    const b = parseBody(s.storeDelete, await jsonBody(c));
    await store.delete(userNamespace(userOf(c), b.namespace), b.key);
    return c.body(null, 204);
  });

  app.post("/items/search", async (c) => {
    const b = parseBody(s.storeSearch, await jsonBody(c));
    const user = userOf(c);
    const strip = ownerOf(user) ? 1 : 0;
    const search = (limit: number, offset: number) =>
      store.search(userNamespace(user, b.namespace_prefix ?? []), { filter: b.filter, limit, offset, query: b.query });
    // A LangGraph store handler's filters: the page is taken from the items they pass.
    const filters = c.get("storeAuth");
    const items = filters
      ? await scanAuthorized(search, (i) => storeItemMatches(filters, { ...i, namespace: i.namespace.slice(strip) }), b)
      : await search(b.limit, b.offset);
    if (b.refresh_ttl ?? deps.ttl.refreshOnRead) await deps.storage.ttl.refreshItems(items, deps.ttl.storeTtlMinutes);
    return c.json({ items: items.map((i) => itemToWire(i, strip)) });
  });

  app.post("/namespaces", async (c) => {
    const b = parseBody(s.storeNamespaces, await jsonBody(c));
    const confined = ownerOf(userOf(c)) !== null;
    const list = async (limit: number, offset: number) =>
      (await store.listNamespaces({
        prefix: confined ? userNamespace(userOf(c), b.prefix ?? []) : b.prefix,
        suffix: b.suffix,
        maxDepth: b.max_depth !== undefined && confined ? b.max_depth + 1 : b.max_depth,
        limit,
        offset,
      })).map((n) => n.slice(confined ? 1 : 0));
    const filters = c.get("storeAuth");
    const namespaces = filters
      ? await scanAuthorized(list, (namespace) => storeItemMatches(filters, { namespace }), b)
      : await list(b.limit, b.offset);
    return c.json({ namespaces });
  });

  return app;
}
