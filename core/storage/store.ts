/**
 * A LangGraph store (long-term memory) over our SQL: items by namespace and key, search by
 * namespace prefix with a filter (equality or `$eq`/`$ne`/`$gt`/`$gte`/`$lt`/`$lte`), and
 * namespace listing with prefix/suffix/max depth. `query` is a case-insensitive text match
 * over the item's value (no embeddings).
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
import type { SqlExecutor } from "./sql.ts";

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
  readonly #sql: SqlExecutor;

  constructor(sql: SqlExecutor) {
    super();
    this.#sql = sql;
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
    const { rows } = await this.#sql.query<ItemRow>("SELECT * FROM store_items WHERE namespace = $1 AND key = $2", [op.namespace, op.key]);
    return rows[0] ? toItem(rows[0]) : null;
  }

  async #put(op: PutOperation): Promise<void> {
    if (op.value === null) {
      await this.#sql.query("DELETE FROM store_items WHERE namespace = $1 AND key = $2", [op.namespace, op.key]);
      return;
    }
    await this.#sql.query(
      `INSERT INTO store_items (namespace, key, value) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [op.namespace, op.key, JSON.stringify(op.value)],
    );
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    const params: unknown[] = [op.namespacePrefix, op.namespacePrefix.length];
    const where = ["namespace[1:$2] = $1::text[]"];
    if (op.namespacePrefix.length === 0) where.length = 0;
    if (op.namespacePrefix.length === 0) params.length = 0;
    for (const [field, cond] of Object.entries(op.filter ?? {})) {
      const ops = cond !== null && typeof cond === "object" && !Array.isArray(cond) && Object.keys(cond).every((k) => k in OPERATORS)
        ? Object.entries(cond as Record<string, unknown>)
        : [["$eq", cond] as [string, unknown]];
      for (const [operator, value] of ops) {
        params.push(field.split("."));
        const path = `value #> $${params.length}::text[]`;
        params.push(JSON.stringify(value));
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

function toItem(row: ItemRow): SearchItem {
  return {
    namespace: row.namespace,
    key: row.key,
    value: row.value,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
