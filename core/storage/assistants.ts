/**
 * Assistants: a graph plus config, context and metadata, versioned on every update.
 */
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlDriver, SqlExecutor } from "./sql.ts";
import { agentcliError, SearchEncrypted } from "../kernel/index.ts";
import { type Assistant, iso, type Json, sortClause } from "./records.ts";
import { updateInTx } from "./assistants/versions.ts";
import { type AssistantHint, type AssistantScope, hintKey, lookup, SYSTEM, visible } from "./assistants/visibility.ts";
import { jsonbText } from "./jsonb.ts";

export { currentCheck, isSystemAssistant } from "./assistants/visibility.ts";
export type { AssistantHint, AssistantScope } from "./assistants/visibility.ts";

export interface AssistantRow extends Omit<Assistant, "created_at" | "updated_at"> {
  created_at: Date;
  updated_at: Date;
}

const toAssistant = (r: AssistantRow): Assistant => ({
  ...r,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export interface AssistantInput {
  assistant_id: string;
  graph_id: string;
  config?: Json;
  context?: unknown;
  metadata?: Json;
  name: string;
  description?: string | null;
}

export interface AssistantFilter {
  graph_id?: string;
  name?: string;
  metadata?: Json;
}

/** At most this many remembered assistant lookups per replica (see AssistantStore.resolveHint). */
const MAX_HINTS = 1000;

/** Assistant records and their versions. */
export class AssistantStore {
  readonly #sql: SqlDriver;
  /**
   * `resolve` results, on the embedded engine only: one process owns its database, and every
   * write goes through this store, which clears the cache. (PostgreSQL is shared by replicas.)
   */
  readonly #resolved: Map<string, Promise<Assistant | null>> | null;
  /**
   * On a shared database (PostgreSQL), `resolveHint` results with their row versions
   * (`xmin`): never served as they are, only checked by the statement that uses them (see
   * {@link currentCheck}), so another replica's write is never missed.
   */
  readonly #hints: Map<string, AssistantHint> | null;
  readonly #enc: AtRestEncryption | null;
  constructor(sql: SqlDriver, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#resolved = sql.kind === "pglite" ? new Map() : null;
    this.#hints = sql.kind === "pglite" ? null : new Map();
    this.#enc = opts.encryption ?? null;
  }

  /** Metadata as stored: the `LANGGRAPH_AES_JSON_KEYS` values sealed. */
  #metadata(m: Json | undefined): string {
    return jsonbText(this.#enc ? this.#enc.sealKeys(m ?? {}) : m ?? {});
  }

  #toAssistant(r: AssistantRow): Assistant {
    const a = toAssistant(r);
    return this.#enc ? { ...a, metadata: this.#enc.openKeys(a.metadata) } : a;
  }

  #refuseSealedFilter(metadata: Json | undefined): void {
    const keys = this.#enc?.filteredKeys(metadata) ?? [];
    if (keys.length) {
      throw agentcliError(SearchEncrypted, {
        what: "assistants",
        by: `metadata key ${keys.map((k) => `"${k}"`).join(", ")}`,
        keys: "LANGGRAPH_AES_JSON_KEYS",
      });
    }
  }

  #changed(): void {
    this.#resolved?.clear();
    this.#hints?.clear();
  }

  /** Clears the cache again once a write settles (a lookup may have run meanwhile). */
  #after<T>(p: Promise<T>): Promise<T> {
    return p.finally(() => this.#changed());
  }

  /** Inserts an assistant; returns null when it exists already. */
  async create(a: AssistantInput): Promise<Assistant | null> {
    this.#changed();
    return this.#after(this.#sql.transaction(async (tx) => {
      const { rows } = await tx.query<AssistantRow>(
        `INSERT INTO assistants (assistant_id, graph_id, config, context, metadata, name, description)
         VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::jsonb, $6, $7) ON CONFLICT (assistant_id) DO NOTHING RETURNING *`,
        [
          a.assistant_id,
          a.graph_id,
          jsonbText(a.config ?? {}),
          jsonbText(a.context ?? null),
          this.#metadata(a.metadata),
          a.name,
          a.description ?? null,
        ],
      );
      if (!rows[0]) return null;
      await tx.query(
        `INSERT INTO assistant_versions (assistant_id, version, graph_id, config, context, metadata, name, description)
         SELECT assistant_id, version, graph_id, config, context, metadata, name, description FROM assistants WHERE assistant_id = $1`,
        [a.assistant_id],
      );
      return this.#toAssistant(rows[0]);
    }));
  }

  /**
   * Keeps a system (default) assistant's description in step with the project: a redeploy
   * that edits `[agent].description` updates it in place (its current version too).
   */
  async syncSystemDescription(id: string, description: string | null): Promise<void> {
    this.#changed();
    await this.#after(this.#sql.transaction(async (tx) => {
      const { rows } = await tx.query<{ version: number }>(
        `UPDATE assistants SET description = $2, updated_at = now()
         WHERE assistant_id = $1 AND metadata->>'created_by' = 'system' AND description IS DISTINCT FROM $2 RETURNING version`,
        [id, description],
      );
      if (rows[0]) {
        await tx.query("UPDATE assistant_versions SET description = $2 WHERE assistant_id = $1 AND version = $3", [
          id,
          description,
          rows[0].version,
        ]);
      }
    }));
  }

  async get(id: string, scope?: AssistantScope): Promise<Assistant | null> {
    const params: unknown[] = [id];
    const vis = visible(scope, params);
    const { rows } = await this.#sql.query<AssistantRow>(
      `SELECT * FROM assistants WHERE assistant_id = $1${vis ? ` AND ${vis}` : ""}`,
      params,
    );
    return rows[0] ? this.#toAssistant(rows[0]) : null;
  }

  /**
   * One lookup for what a run names, among what `scope` sees: the assistant with that id,
   * else the server's system assistant of that graph id, else of that name. (Scoped in the
   * query, so another user's assistant named "agent" can never shadow the default one.)
   */
  resolve(key: string, scope?: AssistantScope): Promise<Assistant | null> {
    const cacheKey = hintKey(key, scope);
    const cached = this.#resolved?.get(cacheKey);
    if (cached) return cached;
    const p = this.#resolve(key, scope);
    if (this.#resolved) {
      this.#resolved.set(cacheKey, p);
      p.then((a) => a || this.#resolved?.delete(cacheKey), () => this.#resolved?.delete(cacheKey));
    }
    return p;
  }

  async #resolve(key: string, scope?: AssistantScope): Promise<Assistant | null> {
    const { text, params } = lookup(key, scope);
    const { rows } = await this.#sql.query<AssistantRow>(text, params);
    return rows[0] ? this.#toAssistant(rows[0]) : null;
  }

  /**
   * What `resolve` gives, for a statement that checks it is still current: on the embedded
   * engine `resolve` itself (its cache is exact; `hint` null). On a shared database, the last
   * result for this key and scope when there is one, without a query (`hint`: pass it to
   * {@link currentCheck} in the statement that uses the assistant, and resolve again if that
   * says it is not current), else a fresh lookup that is remembered.
   */
  async resolveHint(
    key: string,
    scope?: AssistantScope,
  ): Promise<{ assistant: Assistant | null; hint: AssistantHint | null }> {
    if (!this.#hints) return { assistant: await this.resolve(key, scope), hint: null };
    const cacheKey = hintKey(key, scope);
    const known = this.#hints.get(cacheKey);
    if (known) return { assistant: known.assistant, hint: known };
    const { text, params } = lookup(key, scope, true);
    const { rows } = await this.#sql.query<AssistantRow & { row_version: string }>(text, params);
    const row = rows[0];
    if (!row) return { assistant: null, hint: null };
    const { row_version: version, ...rest } = row;
    const assistant = this.#toAssistant(rest as AssistantRow);
    const hint: AssistantHint = { key, scope, assistant, version };
    if (this.#hints.size >= MAX_HINTS) this.#hints.delete(this.#hints.keys().next().value!);
    this.#hints.set(cacheKey, hint);
    return { assistant, hint: null };
  }

  /** Drops a hint a statement found not current (see {@link resolveHint}). */
  forgetHint(hint: AssistantHint): void {
    const cacheKey = hintKey(hint.key, hint.scope);
    if (this.#hints?.get(cacheKey) === hint) this.#hints.delete(cacheKey);
  }

  /** The graph of an assistant (in `tx` when given), or null when it no longer exists. */
  async graphOf(id: string, tx: SqlExecutor = this.#sql): Promise<string | null> {
    const { rows } = await tx.query<{ graph_id: string }>("SELECT graph_id FROM assistants WHERE assistant_id = $1", [
      id,
    ]);
    return rows[0]?.graph_id ?? null;
  }

  /** The system assistant of a graph created by the server (by graph id or by name). */
  async findByGraphOrName(key: string): Promise<Assistant | null> {
    const { rows } = await this.#sql.query<AssistantRow>(
      `SELECT * FROM assistants WHERE (graph_id = $1 OR name = $1) AND ${SYSTEM} ORDER BY (graph_id = $1) DESC, created_at LIMIT 1`,
      [key],
    );
    return rows[0] ? this.#toAssistant(rows[0]) : null;
  }

  #where(f: AssistantFilter, scope: AssistantScope | undefined, params: unknown[]): string {
    this.#refuseSealedFilter(f.metadata);
    const where: string[] = [];
    const vis = visible(scope, params);
    if (vis) where.push(vis);
    if (f.graph_id) where.push(`graph_id = $${params.push(f.graph_id)}`);
    if (f.name) where.push(`name ILIKE $${params.push(`%${f.name}%`)}`);
    if (f.metadata && Object.keys(f.metadata).length) {
      where.push(`metadata @> $${params.push(jsonbText(f.metadata))}::jsonb`);
    }
    return where.length ? `WHERE ${where.join(" AND ")}` : "";
  }

  async search(
    f: AssistantFilter & { limit: number; offset: number; sort_by?: string; sort_order?: string },
    scope?: AssistantScope,
  ): Promise<Assistant[]> {
    const params: unknown[] = [];
    const where = this.#where(f, scope, params);
    const order = sortClause(f, {
      allowed: ["assistant_id", "graph_id", "name", "created_at", "updated_at"],
      fallback: "created_at",
    });
    const { rows } = await this.#sql.query<AssistantRow>(
      `SELECT * FROM assistants ${where} ORDER BY ${order}, assistant_id LIMIT $${params.push(f.limit)} OFFSET $${
        params.push(f.offset)
      }`,
      params,
    );
    return rows.map((r) => this.#toAssistant(r));
  }

  async count(f: AssistantFilter, scope?: AssistantScope): Promise<number> {
    const params: unknown[] = [];
    const { rows } = await this.#sql.query<{ n: string }>(
      `SELECT count(*) AS n FROM assistants ${this.#where(f, scope, params)}`,
      params,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Applies a patch as a new version that becomes the latest. */
  async update(id: string, patch: Partial<Omit<AssistantInput, "assistant_id">>): Promise<Assistant | null> {
    this.#changed();
    return this.#after(this.#sql.transaction(async (tx) => {
      const row = await updateInTx(tx, { id, patch, metadata: (m) => this.#metadata(m) });
      return row ? this.#toAssistant(row) : null;
    }));
  }

  async delete(id: string): Promise<boolean> {
    this.#changed();
    const { rowCount } = await this.#after(this.#sql.query("DELETE FROM assistants WHERE assistant_id = $1", [id]));
    return rowCount > 0;
  }

  async versions(
    id: string,
    f: { metadata?: Json; limit: number; offset: number },
  ): Promise<Array<Omit<Assistant, "updated_at">>> {
    this.#refuseSealedFilter(f.metadata);
    const params: unknown[] = [id];
    const meta = f.metadata && Object.keys(f.metadata).length
      ? ` AND metadata @> $${params.push(jsonbText(f.metadata))}::jsonb`
      : "";
    const { rows } = await this.#sql.query<AssistantRow>(
      `SELECT * FROM assistant_versions WHERE assistant_id = $1${meta} ORDER BY version DESC LIMIT $${
        params.push(f.limit)
      } OFFSET $${params.push(f.offset)}`,
      params,
    );
    return rows.map((r) => ({
      ...r,
      metadata: this.#enc ? this.#enc.openKeys(r.metadata) : r.metadata,
      created_at: iso(r.created_at),
    }));
  }

  /** Makes an earlier version the latest; null when the assistant or version does not exist. */
  async setLatest(id: string, version: number): Promise<Assistant | null> {
    this.#changed();
    const { rows } = await this.#after(this.#sql.query<AssistantRow>(
      `UPDATE assistants a SET graph_id = v.graph_id, config = v.config, context = v.context, metadata = v.metadata, name = v.name,
       description = v.description, version = v.version, updated_at = now()
       FROM assistant_versions v WHERE a.assistant_id = $1 AND v.assistant_id = $1 AND v.version = $2 RETURNING a.*`,
      [id, version],
    ));
    return rows[0] ? this.#toAssistant(rows[0]) : null;
  }
}
