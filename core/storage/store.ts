/**
 * A LangGraph store (long-term memory) over our SQL: items by namespace and key, search by
 * namespace prefix with a filter (equality or `$eq`/`$ne`/`$gt`/`$gte`/`$lt`/`$lte`), and
 * namespace listing with prefix/suffix/max depth. With an embedding model (`index`,
 * ./store-index.ts) `query` ranks the indexed items by vector similarity (each gets a `score`);
 * without one it is a case-insensitive text match over the item's value. With encryption at rest (./encryption.ts) values are
 * stored sealed, so filters and `query` are applied here, after decrypting the namespace's items.
 *
 * @example
 * const store = new SqlStore(sql);
 * await store.put(["memories", "user-1"], "AGENTS.md", { content: "..." });
 */
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlDriver } from "./sql.ts";
import {
  candidateCount,
  embedAll,
  ensureVectorIndex,
  nearestVectorsSql,
  queryParam,
  similarityExpr,
  type StoreIndex,
  textsToIndex,
  type VectorEngine,
  type VectorSupport,
  vectorSupport,
} from "./store-index.ts";
import { jsonbText } from "./jsonb.ts";

interface ItemRow {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: Date | string;
  updated_at: Date | string;
}

const OPERATORS: Record<string, string> = { $eq: "=", $ne: "<>", $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" };

/** `BaseStore` over the `store_items` table. */
export class SqlStore extends BaseStore {
  readonly #sql: SqlDriver;
  readonly #encryption: AtRestEncryption | null;
  readonly #index: StoreIndex | null;
  #vectors: Promise<VectorSupport> | null = null;
  /** Dimensions whose HNSW index this process has made sure of. */
  readonly #indexed = new Map<number, Promise<void>>();

  constructor(sql: SqlDriver, opts: { encryption?: AtRestEncryption | null; index?: StoreIndex | null } = {}) {
    super();
    this.#sql = sql;
    this.#encryption = opts.encryption ?? null;
    this.#index = opts.index ?? null;
  }

  /** What `query` does: vector similarity (with the model and the engine computing it) or text matching. */
  async searchMode(): Promise<{ query: "vector"; model: string; engine: VectorEngine } | { query: "text" }> {
    if (!this.#index) return { query: "text" };
    return { query: "vector", model: this.#index.model, engine: (await this.#vectorSupport()).engine };
  }

  #vectorSupport(): Promise<VectorSupport> {
    this.#vectors ??= vectorSupport(this.#sql);
    return this.#vectors;
  }

  async #ensureIndex(dims: number): Promise<void> {
    const support = await this.#vectorSupport();
    let made = this.#indexed.get(dims);
    if (!made) {
      made = ensureVectorIndex(this.#sql, support, dims);
      this.#indexed.set(dims, made);
      made.catch(() => this.#indexed.delete(dims));
    }
    await made;
  }

  #toItem(row: ItemRow): SearchItem {
    const item = toItem(row);
    if (this.#encryption) item.value = this.#encryption.openJson(item.value);
    return item;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) {
      if ("namespacePrefix" in op) results.push(await this.#search(op));
      else if ("value" in op) results.push(await this.#put(op));
      else if ("key" in op) results.push(await this.#get(op));
      else results.push(await this.#listNamespaces(op as ListNamespacesOperation));
    }
    return results as OperationResults<Op>;
  }

  async #get(op: GetOperation): Promise<Item | null> {
    const { rows } = await this.#sql.query<ItemRow>("SELECT * FROM store_items WHERE namespace = $1 AND key = $2", [
      op.namespace,
      op.key,
    ]);
    return rows[0] ? this.#toItem(rows[0]) : null;
  }

  async #put(op: PutOperation): Promise<void> {
    if (op.value === null) {
      await this.#sql.query("DELETE FROM store_items WHERE namespace = $1 AND key = $2", [op.namespace, op.key]);
      return;
    }
    const params: unknown[] = [
      op.namespace,
      op.key,
      jsonbText(this.#encryption ? this.#encryption.sealJson(op.value) : op.value),
    ];
    const upsert = `INSERT INTO store_items (namespace, key, value) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`;
    if (!this.#index) {
      await this.#sql.query(upsert, params);
      return;
    }
    // The item and its vectors change in one statement: its fields' vectors, and none for fields no longer indexed.
    const texts = op.index === false
      ? []
      : textsToIndex(op.value, op.index ?? this.#index.fields, op.index !== undefined);
    const vectors = texts.length ? await embedAll(this.#index, texts.map(([, t]) => t)) : [];
    for (const dims of new Set(vectors.map((v) => v.length))) await this.#ensureIndex(dims);
    params.push(
      texts.map(([field]) => field),
      JSON.stringify(texts.map(([field], i) => ({ field, embedding: vectors[i] }))),
    );
    await this.#sql.query(
      `WITH i AS (${upsert} RETURNING namespace, key),
       d AS (DELETE FROM store_vectors WHERE namespace = $1 AND key = $2 AND NOT (field = ANY($4::text[])))
       INSERT INTO store_vectors (namespace, key, field, embedding)
       SELECT $1, $2, x.field, ARRAY(SELECT e::real FROM jsonb_array_elements_text(x.embedding) AS e)
       FROM jsonb_to_recordset($5::jsonb) AS x (field text, embedding jsonb)
       ON CONFLICT (namespace, key, field) DO UPDATE SET embedding = EXCLUDED.embedding`,
      params,
    );
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    const params: unknown[] = [op.namespacePrefix, op.namespacePrefix.length];
    const where = ["namespace[1:$2] = $1::text[]"];
    if (op.namespacePrefix.length === 0) where.length = 0;
    if (op.namespacePrefix.length === 0) params.length = 0;
    if (op.query && this.#index) return this.#searchSimilar(op, where, params);
    if (this.#encryption) return this.#searchSealed(op, where, params);
    filterClauses(op.filter, where, params);
    if (op.query) {
      params.push(`%${op.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      where.push(`value::text ILIKE $${params.length}`);
    }
    params.push(op.limit ?? 10, op.offset ?? 0);
    const { rows } = await this.#sql.query<ItemRow>(
      `SELECT * FROM store_items ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY updated_at DESC, key LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map(toItem);
  }

  /**
   * Ranks the indexed items under the prefix by similarity to the embedded query (best field
   * first), with the filter applied in SQL, or here after decrypting when values are sealed.
   * With pgvector the candidates are the nearest vectors (the HNSW index, scanned on until the
   * filter has let enough through); otherwise, and for sealed values, every vector is scored.
   */
  async #searchSimilar(op: SearchOperation, where: string[], params: unknown[]): Promise<SearchItem[]> {
    const [vector] = await embedAll(this.#index!, [op.query!]);
    const dims = vector!.length;
    const support = await this.#vectorSupport();
    const sealed = this.#encryption !== null;
    const limit = op.limit ?? 10;
    const offset = op.offset ?? 0;
    if (!sealed) filterClauses(op.filter, where, params);
    const q = `$${params.push(queryParam(support, vector!))}`;
    let rows: Array<ItemRow & { score: number }>;
    if (support.engine === "pgvector" && !sealed) {
      await this.#ensureIndex(dims);
      const nearest = nearestVectorsSql(support, {
        param: q,
        dims,
        where,
        limit: `$${params.push(candidateCount(limit, offset))}`,
      });
      const text = `SELECT i.*, s.score FROM store_items i
         JOIN (SELECT c.namespace, c.key, max(1 - c.distance) AS score FROM (${nearest}) c GROUP BY c.namespace, c.key) s USING (namespace, key)
         ORDER BY s.score DESC, i.updated_at DESC, i.key LIMIT $${params.push(limit)} OFFSET $${params.push(offset)}`;
      // Relaxed order: the index is scanned on past ef_search until the limit is met; the outer ORDER BY sorts exactly.
      rows = (await this.#sql.transaction(async (tx) => {
        await tx.query("SET LOCAL hnsw.iterative_scan = relaxed_order");
        return tx.query<ItemRow & { score: number }>(text, params);
      })).rows;
    } else {
      const prefix = op.namespacePrefix.length ? "v.namespace[1:$2] = $1::text[]" : "TRUE";
      const page = sealed ? "" : ` LIMIT $${params.push(limit)} OFFSET $${params.push(offset)}`;
      rows = (await this.#sql.query<ItemRow & { score: number }>(
        `SELECT i.*, s.score FROM store_items i
         JOIN (SELECT v.namespace, v.key, ${similarityExpr(support, q, dims)} AS score FROM store_vectors v
               WHERE ${prefix} AND array_length(v.embedding, 1) = ${dims} GROUP BY v.namespace, v.key) s
           USING (namespace, key)
         ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY s.score DESC, i.updated_at DESC, i.key${page}`,
        params,
      )).rows;
    }
    const items = rows.map((r) => ({ ...this.#toItem(r), score: Number(r.score) }));
    if (!sealed) return items;
    return items.filter((item) => matchesFilter(item.value, op.filter)).slice(offset, offset + limit);
  }

  /** Search over sealed values: the namespace's items, newest first, decrypted and matched here. */
  async #searchSealed(op: SearchOperation, where: string[], params: unknown[]): Promise<SearchItem[]> {
    const { rows } = await this.#sql.query<ItemRow>(
      `SELECT * FROM store_items ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY updated_at DESC, key`,
      params,
    );
    const query = op.query?.toLowerCase();
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const out: SearchItem[] = [];
    let skipped = 0;
    for (const row of rows) {
      const item = this.#toItem(row);
      if (
        !matchesFilter(item.value, op.filter) || (query && !JSON.stringify(item.value).toLowerCase().includes(query))
      ) continue;
      if (skipped++ < offset) continue;
      out.push(item);
      if (out.length >= limit) break;
    }
    return out;
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const { rows } = await this.#sql.query<{ namespace: string[] }>("SELECT DISTINCT namespace FROM store_items");
    const matches = (ns: string[], path: string[], from: "prefix" | "suffix") => {
      if (path.length > ns.length) return false;
      const part = from === "prefix" ? ns.slice(0, path.length) : ns.slice(ns.length - path.length);
      return path.every((p, i) => p === "*" || p === part[i]);
    };
    const seen = new Set<string>();
    const out: string[][] = [];
    for (const { namespace } of rows) {
      if (!(op.matchConditions ?? []).every((c) => matches(namespace, c.path, c.matchType))) continue;
      const ns = op.maxDepth !== undefined ? namespace.slice(0, op.maxDepth) : namespace;
      const key = JSON.stringify(ns);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(ns);
    }
    out.sort((a, b) => a.join("\u0000").localeCompare(b.join("\u0000")));
    return out.slice(op.offset, op.offset + op.limit);
  }
}

/** Adds a search filter's conditions on `value` (equality or `$eq`/`$ne`/`$gt`/`$gte`/`$lt`/`$lte`) to a WHERE list. */
function filterClauses(filter: Record<string, unknown> | undefined, where: string[], params: unknown[]): void {
  for (const [field, cond] of Object.entries(filter ?? {})) {
    const ops = cond !== null && typeof cond === "object" && !Array.isArray(cond) && Object.keys(cond).every((k) =>
        k in OPERATORS
      )
      ? Object.entries(cond as Record<string, unknown>)
      : [["$eq", cond] as [string, unknown]];
    for (const [operator, value] of ops) {
      params.push(field.split("."));
      const path = `value #> $${params.length}::text[]`;
      params.push(jsonbText(value));
      const sqlOp = OPERATORS[operator]!;
      where.push(
        typeof value === "number" && sqlOp !== "=" && sqlOp !== "<>"
          ? `(jsonb_typeof(${path}) = 'number' AND (${path})::numeric ${sqlOp} $${params.length}::numeric)`
          : typeof value === "string" && sqlOp !== "=" && sqlOp !== "<>"
          ? `(${path} #>> '{}') ${sqlOp} ($${params.length}::jsonb #>> '{}')`
          : sqlOp === "="
          ? `${path} = $${params.length}::jsonb`
          : `${path} IS DISTINCT FROM $${params.length}::jsonb`,
      );
    }
  }
}

/** The SQL filter's semantics (equality of JSON values, comparison of numbers or strings), on a decrypted value. */
export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  for (const [field, cond] of Object.entries(filter ?? {})) {
    const ops = cond !== null && typeof cond === "object" && !Array.isArray(cond) && Object.keys(cond).every((k) =>
        k in OPERATORS
      )
      ? Object.entries(cond as Record<string, unknown>)
      : [["$eq", cond] as [string, unknown]];
    let actual: unknown = value;
    for (const part of field.split(".")) {
      actual = actual !== null && typeof actual === "object" ? (actual as Record<string, unknown>)[part] : undefined;
    }
    for (const [operator, expected] of ops) {
      const sqlOp = OPERATORS[operator]!;
      if (sqlOp === "=" || sqlOp === "<>") {
        if ((sqlOp === "=") !== (actual !== undefined && sameJson(actual, expected))) return false;
        continue;
      }
      if (
        typeof expected === "number"
          ? typeof actual !== "number"
          : typeof expected !== "string" || actual === undefined || actual === null
      ) return false;
      const e = expected as number | string;
      const a = typeof e === "number" ? actual as number : typeof actual === "string" ? actual : JSON.stringify(actual);
      const ok = sqlOp === ">" ? a > e : sqlOp === ">=" ? a >= e : sqlOp === "<" ? a < e : a <= e;
      if (!ok) return false;
    }
  }
  return true;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (
    typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)
  ) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function toItem(row: ItemRow): SearchItem {
  return {
    namespace: row.namespace,
    key: row.key,
    value: row.value,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
