/**
 * Semantic search of the store (LangGraph's store `index`): an item's indexed fields are
 * embedded when it is put, one vector per field value, in `store_vectors`; a search `query` is
 * embedded and items rank by cosine similarity (their best field). Vectors are stored
 * normalized, so the similarity is their dot product: computed by pgvector (`<=>`) when the
 * database has the `vector` extension, else in SQL over `real[]` (PGlite here: its pgvector
 * build is a separate package pinned to another PGlite version).
 *
 * Field paths, as LangGraph's: `$` (the whole value), `a.b`, `list[*].text` (each element),
 * `list[0].text`.
 *
 * @example
 * const index: StoreIndex = { model: "openai:text-embedding-3-small", fields: ["$"], embed: (texts) => embeddings.embedDocuments(texts) };
 */
import { userError } from "../errors.ts";
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

/** Uses pgvector when the database offers it (creating the extension), else SQL over `real[]`. */
export async function vectorEngine(sql: SqlExecutor): Promise<VectorEngine> {
  try {
    const { rows } = await sql.query<{ installed: boolean }>("SELECT installed_version IS NOT NULL AS installed FROM pg_available_extensions WHERE name = 'vector'");
    if (!rows[0]) return "sql";
    if (!rows[0].installed) await sql.query("CREATE EXTENSION IF NOT EXISTS vector");
    return "pgvector";
  } catch {
    // Offered but not ours to create (permissions): the SQL fallback.
    return "sql";
  }
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
      let items: Array<[string, unknown]> = m[1] ? [[label ? `${label}.${m[1]}` : m[1], isObject(v) ? v[m[1]] : undefined]] : [[label, v]];
      for (const [, sel] of m[2]!.matchAll(/\[(\*|\d+)\]/g)) {
        items = items.flatMap(([l, x]): Array<[string, unknown]> =>
          !Array.isArray(x) ? [] : sel === "*" ? x.map((e, i) => [`${l}[${i}]`, e]) : [[`${l}[${sel}]`, x[Number(sel)]]]
        );
      }
      next.push(...items);
    }
    current = next;
  }
  return current.filter(([, v]) => v !== undefined && v !== null).map(([l, v]) => [l, typeof v === "string" ? v : JSON.stringify(v)]);
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
      throw userError("UNPROCESSABLE", {
        message: `Invalid store index: field "${field}" is not in the item's value`,
        hint: 'Name fields of the value: "$" (all of it), "a.b", "list[*].text"; or index: false.',
      });
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
    throw userError("REMOTE_FAILED", { message: `Cannot embed for the store with "${index.model}": ${(err as Error).message}`, hint: "Check AGENTCLI_STORE_EMBEDDINGS and the provider's credentials and address.", status: 502 });
  }
  if (vectors.length !== texts.length || vectors.some((v) => !Array.isArray(v) || v.length === 0)) {
    throw userError("REMOTE_FAILED", { message: `Cannot embed for the store with "${index.model}": it returned ${vectors.length} vectors for ${texts.length} texts`, status: 502 });
  }
  return vectors.map(normalize);
}

/** SQL of an item's best similarity to the query vector `$n` (normalized), over `store_vectors v`. */
export function similarityExpr(engine: VectorEngine, param: string): string {
  return engine === "pgvector"
    ? `max(1 - (v.embedding::vector <=> ${param}::vector))`
    : `max((SELECT sum(a * b) FROM unnest(v.embedding, ${param}::real[]) AS t (a, b)))`;
}

/** The query vector as the parameter the engine's expression takes. */
export function queryParam(engine: VectorEngine, v: number[]): unknown {
  return engine === "pgvector" ? `[${v.join(",")}]` : v;
}
