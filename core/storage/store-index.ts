/**
 * Semantic search of the store (LangGraph's store `index`): an item's indexed fields are
 * embedded when it is put, one vector per field value, in `store_vectors`; a search `query` is
 * embedded and items rank by cosine similarity (their best field). Vectors are stored
 * normalized, so the similarity is their dot product.
 *
 * Computed by pgvector when the database has the `vector` extension (PGlite always has it, see
 * ./pglite-vector.ts; a PostgreSQL server when pgvector is installed there), created on first
 * use, in `public` so databases whose schemas come and go keep it. Each embedding dimension
 * gets an HNSW index (cosine) on the first put of that dimension, and a search takes its
 * nearest vectors through it (iterative scan, so filters still fill a page). Without the
 * extension (or the right to create it) the similarity is computed in SQL over `real[]`, exactly.
 *
 * Field paths, as LangGraph's: `$` (the whole value), `a.b`, `list[*].text` (each element),
 * `list[0].text`.
 *
 * @example
 * const index: StoreIndex = { model: "openai:text-embedding-3-small", fields: ["$"], embed: (texts) => embeddings.embedDocuments(texts) };
 */
import { agentcliError, EmbeddingCount, EmbeddingFailed, StoreIndexField } from "../kernel/index.ts";
import type { SqlExecutor } from "./sql.ts";

/** How the store embeds: the model's name (`provider:model`), the default fields, the embedding function. */
export interface StoreIndex {
  model: string;
  /** Fields indexed when a put names none (default `["$"]`). */
  fields: string[];
  embed(texts: string[]): Promise<number[][]>;
}

/** Which engine computes similarities. */
export type VectorEngine = "pgvector" | "sql";

/** The engine, and for pgvector the schema its type and operators live in (quoted). */
export interface VectorSupport {
  engine: VectorEngine;
  schema: string | null;
}

/** pgvector's HNSW index takes vectors of up to this many dimensions; beyond, searches scan. */
export const HNSW_MAX_DIMENSIONS = 2000;

/** Uses pgvector when the database offers it (creating the extension), else SQL over `real[]`. */
export async function vectorSupport(sql: SqlExecutor): Promise<VectorSupport> {
  const installed = async () => {
    const { rows } = await sql.query<{ schema: string }>(
      "SELECT quote_ident(n.nspname) AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
    );
    return rows[0] ? { engine: "pgvector" as const, schema: rows[0].schema } : null;
  };
  try {
    const found = await installed();
    if (found) return found;
    const { rows } = await sql.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    if (!rows[0]) return { engine: "sql", schema: null };
    const { rows: pub } = await sql.query("SELECT 1 FROM pg_namespace WHERE nspname = 'public'");
    try {
      await sql.query(`CREATE EXTENSION IF NOT EXISTS vector${pub[0] ? " SCHEMA public" : ""}`);
    } catch (err) {
      // Another replica created it at the same moment: it is there now. Else not ours to create.
      if ((await installed()) === null) throw err;
    }
    return (await installed()) ?? { engine: "sql", schema: null };
  } catch {
    // Offered but not ours to create (permissions): the SQL fallback.
    return { engine: "sql", schema: null };
  }
}

/**
 * Creates the HNSW index of one embedding dimension (pgvector only; a partial index over the
 * vectors of that dimension, so a change of model keeps both). Idempotent, also when replicas race.
 */
export async function ensureVectorIndex(sql: SqlExecutor, support: VectorSupport, dims: number): Promise<void> {
  if (support.engine !== "pgvector" || dims > HNSW_MAX_DIMENSIONS) return;
  const name = `store_vectors_hnsw_${dims}`;
  try {
    await sql.query(
      `CREATE INDEX IF NOT EXISTS ${name} ON store_vectors USING hnsw ((${
        asVector(support, "embedding", dims)
      }) ${support.schema}.vector_cosine_ops) WHERE array_length(embedding, 1) = ${dims}`,
    );
  } catch (err) {
    const { rows } = await sql.query(
      "SELECT 1 FROM pg_indexes WHERE indexname = $1 AND schemaname = current_schema()",
      [name],
    );
    if (!rows[0]) throw err;
  }
}

function asVector(support: VectorSupport, expr: string, dims: number): string {
  return `${expr}::${support.schema}.vector(${dims})`;
}

/**
 * SQL of the vectors under a namespace prefix nearest to the query vector `param` (pgvector:
 * ordered by cosine distance, so the HNSW index of the dimension serves it), as
 * `(namespace, key, distance)`, joined to `store_items i` so `where` (the prefix and the
 * filter) applies inside the index scan; at most `limit` rows.
 */
export function nearestVectorsSql(
  support: VectorSupport,
  opts: { param: string; dims: number; where: string[]; limit: string },
): string {
  const distance = `(${asVector(support, "v.embedding", opts.dims)}) OPERATOR(${support.schema}.<=>) ${
    asVector(support, opts.param, opts.dims)
  }`;
  return `SELECT v.namespace, v.key, ${distance} AS distance
    FROM store_vectors v JOIN store_items i USING (namespace, key)
    WHERE ${["array_length(v.embedding, 1) = " + opts.dims, ...opts.where].join(" AND ")}
    ORDER BY ${distance} LIMIT ${opts.limit}`;
}

/** How many nearest vectors a page of `limit` items after `offset` draws from (items have several fields). */
export function candidateCount(limit: number, offset: number): number {
  return Math.max(100, 4 * (limit + offset));
}

/** SQL of an item's best similarity to the query vector `param` (normalized), over `store_vectors v` of `dims` dimensions. */
export function similarityExpr(support: VectorSupport, param: string, dims: number): string {
  return support.engine === "pgvector"
    ? `max(1 - ((${asVector(support, "v.embedding", dims)}) OPERATOR(${support.schema}.<=>) ${
      asVector(support, param, dims)
    }))`
    : `max((SELECT sum(a * b) FROM unnest(v.embedding, ${param}::real[]) AS t (a, b)))`;
}

/** The query vector as the parameter the engine's expressions take. */
export function queryParam(support: VectorSupport, v: number[]): unknown {
  return support.engine === "pgvector" ? `[${v.join(",")}]` : v;
}

/** The texts of one field path in a value: `[label, text]` pairs (none when the path names nothing). */
export function fieldTexts(value: unknown, path: string): Array<[string, string]> {
  if (path === "$") return [["$", JSON.stringify(value)]];
  let current: Array<[string, unknown]> = [["", value]];
  for (const part of path.split(".")) {
    const m = /^([^[\]]*)((?:\[(?:\*|\d+)\])*)$/.exec(part);
    if (!m) return [];
    const next: Array<[string, unknown]> = [];
    for (const [label, v] of current) {
      let items: Array<[string, unknown]> = m[1]
        ? [[label ? `${label}.${m[1]}` : m[1], isObject(v) ? v[m[1]] : undefined]]
        : [[label, v]];
      for (const [, sel] of m[2]!.matchAll(/\[(\*|\d+)\]/g)) {
        items = items.flatMap(([l, x]): Array<[string, unknown]> =>
          !Array.isArray(x) ? [] : sel === "*" ? x.map((e, i) => [`${l}[${i}]`, e]) : [[`${l}[${sel}]`, x[Number(sel)]]]
        );
      }
      next.push(...items);
    }
    current = next;
  }
  return current.filter(([, v]) => v !== undefined && v !== null).map((
    [l, v],
  ) => [l, typeof v === "string" ? v : JSON.stringify(v)]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The texts to embed for a put: every field's values. A field the put named (`strict`) that
 * names nothing in the value is a 422; a default field (`AGENTCLI_STORE_INDEX_FIELDS`) the
 * value lacks is skipped, so items of other shapes can still be stored.
 */
export function textsToIndex(value: Record<string, unknown>, fields: string[], strict = true): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const field of fields) {
    const texts = fieldTexts(value, field);
    if (texts.length === 0 && strict) {
      throw agentcliError(StoreIndexField, { field });
    }
    out.push(...texts);
  }
  return out;
}

/** A vector scaled to length 1 (cosine similarity becomes a dot product). */
export function normalize(v: number[]): number[] {
  const n = Math.hypot(...v);
  return n > 0 ? v.map((x) => x / n) : v;
}

/** Embeds texts with a clear error when the model fails (the item is not written then). */
export async function embedAll(index: StoreIndex, texts: string[]): Promise<number[][]> {
  let vectors: number[][];
  try {
    vectors = await index.embed(texts);
  } catch (err) {
    throw agentcliError(EmbeddingFailed, { model: index.model, reason: (err as Error).message }, { status: 502 });
  }
  if (vectors.length !== texts.length || vectors.some((v) => !Array.isArray(v) || v.length === 0)) {
    throw agentcliError(EmbeddingCount, { model: index.model, vectors: vectors.length, texts: texts.length }, {
      status: 502,
    });
  }
  return vectors.map(normalize);
}
