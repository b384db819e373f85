/**
 * LangGraph custom auth on the store, as LangGraph's server applies a store handler's filters:
 * to the item seen as `{ ...value, namespace, key }` (a namespace listing: `{ namespace }`).
 * - get, put, delete: an existing item the filters do not pass is 404 (hidden, not refused);
 *   a put whose new item they would not pass, or a delete of a missing item whose namespace
 *   and key they do not pass, is 403;
 * - search and namespace listing: the page is taken after filtering, scanning the store in
 *   pages up to 10,000 records (more is a 400, as LangGraph's server answers).
 *
 * @example
 * await checkStoreItem(deps, { event: "store:get", user, namespace, key, filters });
 * const items = await scanAuthorized((limit, offset) => store.search(ns, { limit, offset }), keep, page);
 */
import type { AuthUser } from "../../kernel/index.ts";
import { agentcliError, LangGraphAuthStoreScanLimit, NotFound } from "../../kernel/index.ts";
import { forbidden } from "../../auth/index.ts";
import { userNamespace } from "../../engine/index.ts";
import type { ServerDeps } from "../deps.ts";
import { type AuthFilters, matchesFilters } from "./langgraph-auth.ts";

const SCAN_PAGE = 1000;
const MAX_SCAN = 10_000;

/** An item (or, without key and value, a namespace) as the filters see it. */
export interface StoreAuthItem {
  namespace: string[];
  key?: string | null;
  value?: Record<string, unknown> | null;
}

/** True when the filters pass the item. */
export function storeItemMatches(filters: AuthFilters | null, item: StoreAuthItem): boolean {
  return matchesFilters({
    ...(item.value ?? {}),
    namespace: item.namespace,
    ...(item.key == null ? {} : { key: item.key }),
  }, filters);
}

/** The item checks of `store:get`, `store:put` and `store:delete` under the handler's filters. */
export async function checkStoreItem(
  deps: ServerDeps,
  o: { event: string; user: AuthUser | null; filters: AuthFilters; namespace: string[]; key: string; value?: unknown },
): Promise<void> {
  if (!o.namespace.length || !o.key) return; // the route answers its own error
  const existing = await deps.storage.store.get(userNamespace(o.user, o.namespace), o.key);
  const seen = (value?: Record<string, unknown> | null) =>
    storeItemMatches(o.filters, { namespace: o.namespace, key: o.key, value });
  if (existing && !seen(existing.value)) throw agentcliError(NotFound, { thing: "Item", id: o.key });
  if (o.event === "store:put" && !seen(o.value as Record<string, unknown> | undefined)) {
    throw forbidden("Not authorized");
  }
  if (o.event === "store:delete" && !existing && !seen()) throw forbidden("Not authorized");
}

/** The page `{ limit, offset }` of what `page` lists once `keep` has filtered it. */
export async function scanAuthorized<T>(
  page: (limit: number, offset: number) => Promise<T[]>,
  keep: (x: T) => boolean,
  o: { limit: number; offset: number },
): Promise<T[]> {
  const want = o.offset + o.limit;
  const kept: T[] = [];
  let scanned = 0;
  while (kept.length < want && scanned < MAX_SCAN) {
    const size = Math.min(SCAN_PAGE, MAX_SCAN - scanned);
    const got = await page(size, scanned);
    scanned += got.length;
    kept.push(...got.filter(keep));
    if (got.length < size) return kept.slice(o.offset, want);
  }
  if (kept.length < want) throw agentcliError(LangGraphAuthStoreScanLimit, { scanned }, { status: 400 });
  return kept.slice(o.offset, want);
}
