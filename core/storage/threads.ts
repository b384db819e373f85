/**
 * Threads: a conversation's metadata, status and a copy of its latest state values and
 * interrupts (the checkpointer holds the full history).
 */
import { agentcliError, SearchEncrypted } from "../kernel/index.ts";
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlDriver, SqlExecutor } from "./sql.ts";
import { iso, type Json, ownerClause, type Scope, sortClause, type Thread, type ThreadStatus } from "./records.ts";
import { jsonbText } from "./jsonb.ts";

interface ThreadRow {
  thread_id: string;
  created_at: Date;
  updated_at: Date;
  state_updated_at: Date;
  metadata: Json;
  status: ThreadStatus;
  state_values: unknown;
  interrupts: Record<string, unknown[]>;
  config: Json;
  error: unknown;
}

const toThread = (r: ThreadRow): Thread => ({
  thread_id: r.thread_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  state_updated_at: iso(r.state_updated_at),
  metadata: r.metadata,
  status: r.status,
  values: r.state_values ?? null,
  interrupts: r.interrupts ?? {},
  config: r.config ?? {},
  error: r.error ?? null,
});

export interface ThreadFilter {
  ids?: string[];
  metadata?: Json;
  values?: Json;
  status?: ThreadStatus;
}

/** Thread records. */
export class ThreadStore {
  readonly #sql: SqlDriver;
  readonly #enc: AtRestEncryption | null;
  constructor(sql: SqlDriver, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
  }

  /** A row as a thread, its sealed columns opened. */
  #toThread(r: ThreadRow): Thread {
    const t = toThread(r);
    const e = this.#enc;
    if (!e) return t;
    return {
      ...t,
      metadata: e.openKeys(t.metadata),
      values: e.openJson(t.values),
      interrupts: e.openJson(t.interrupts) ?? {},
      error: e.openJson(t.error),
    };
  }

  /** Metadata as stored (JSON text): the `LANGGRAPH_AES_JSON_KEYS` values sealed. */
  #metadata(m: Json): string {
    return jsonbText(this.#enc ? this.#enc.sealKeys(m) : m);
  }

  /** The stored form of a JSON state column (values, interrupts, error). */
  #state(value: unknown): string {
    return jsonbText(
      this.#enc && value !== null && value !== undefined ? this.#enc.sealJson(value) : value ?? null,
    );
  }

  /** Inserts a thread (deleted `ttl_minutes` after its last update, see ../engine/queue/ttl-sweeper.ts); returns null when the id is taken. */
  async create(
    t: { thread_id: string; metadata: Json; ttl_minutes?: number },
    tx: SqlExecutor = this.#sql,
  ): Promise<Thread | null> {
    const { rows } = await tx.query<ThreadRow>(
      "INSERT INTO threads (thread_id, metadata, ttl_minutes) VALUES ($1, $2::jsonb, $3) ON CONFLICT (thread_id) DO NOTHING RETURNING *",
      [t.thread_id, this.#metadata(t.metadata), t.ttl_minutes ?? null],
    );
    return rows[0] ? this.#toThread(rows[0]) : null;
  }

  async get(id: string, scope?: Scope, tx: SqlExecutor = this.#sql): Promise<Thread | null> {
    const params: unknown[] = [id];
    const owner = ownerClause(scope, params);
    const { rows } = await tx.query<ThreadRow>(
      `SELECT * FROM threads WHERE thread_id = $1${owner ? ` AND ${owner}` : ""}`,
      params,
    );
    return rows[0] ? this.#toThread(rows[0]) : null;
  }

  #where(f: ThreadFilter, scope: Scope | undefined, params: unknown[]): string {
    const where: string[] = [];
    const sealed = this.#enc
      ? [
        ...this.#enc.filteredKeys(f.metadata).map((k) => `metadata key "${k}"`),
        ...(f.values && Object.keys(f.values).length ? ["values"] : []),
      ]
      : [];
    if (sealed.length) {
      throw agentcliError(SearchEncrypted, {
        what: "threads",
        by: sealed.join(", "),
        keys: "LANGGRAPH_AES_KEY, LANGGRAPH_AES_JSON_KEYS",
      });
    }
    if (f.ids?.length) where.push(`thread_id = ANY($${params.push(f.ids)}::text[])`);
    if (f.metadata && Object.keys(f.metadata).length) {
      where.push(`metadata @> $${params.push(jsonbText(f.metadata))}::jsonb`);
    }
    if (f.values && Object.keys(f.values).length) {
      where.push(`state_values @> $${params.push(jsonbText(f.values))}::jsonb`);
    }
    if (f.status) where.push(`status = $${params.push(f.status)}`);
    const owner = ownerClause(scope, params);
    if (owner) where.push(owner);
    return where.length ? `WHERE ${where.join(" AND ")}` : "";
  }

  async search(
    f: ThreadFilter & { limit: number; offset: number; sort_by?: string; sort_order?: string },
    scope?: Scope,
  ): Promise<Thread[]> {
    const params: unknown[] = [];
    const where = this.#where(f, scope, params);
    const order = sortClause(f, {
      allowed: ["thread_id", "status", "created_at", "updated_at", "state_updated_at"],
      fallback: "created_at",
    });
    const { rows } = await this.#sql.query<ThreadRow>(
      `SELECT * FROM threads ${where} ORDER BY ${order}, thread_id LIMIT $${params.push(f.limit)} OFFSET $${
        params.push(f.offset)
      }`,
      params,
    );
    return rows.map((r) => this.#toThread(r));
  }

  async count(f: ThreadFilter, scope?: Scope): Promise<number> {
    const params: unknown[] = [];
    const { rows } = await this.#sql.query<{ n: string }>(
      `SELECT count(*) AS n FROM threads ${this.#where(f, scope, params)}`,
      params,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Merges metadata into a thread, and sets its time-to-live when `ttlMinutes` is given. */
  async patch(
    id: string,
    metadata: Json,
    { scope, ttlMinutes }: { scope?: Scope; ttlMinutes?: number } = {},
  ): Promise<Thread | null> {
    const params: unknown[] = [id, this.#metadata(metadata), ttlMinutes ?? null];
    const owner = ownerClause(scope, params);
    const { rows } = await this.#sql.query<ThreadRow>(
      `UPDATE threads SET metadata = metadata || $2::jsonb, ttl_minutes = COALESCE($3::float8, ttl_minutes), updated_at = now() WHERE thread_id = $1${
        owner ? ` AND ${owner}` : ""
      } RETURNING *`,
      params,
    );
    return rows[0] ? this.#toThread(rows[0]) : null;
  }

  async delete(id: string, scope?: Scope): Promise<boolean> {
    const params: unknown[] = [id];
    const owner = ownerClause(scope, params);
    const { rowCount } = await this.#sql.query(
      `DELETE FROM threads WHERE thread_id = $1${owner ? ` AND ${owner}` : ""}`,
      params,
    );
    return rowCount > 0;
  }

  /** Locks a thread's row until `tx` ends (`FOR UPDATE`); false when there is no such thread. */
  async lock(id: string, tx: SqlExecutor): Promise<boolean> {
    const { rows } = await tx.query("SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE", [id]);
    return rows.length > 0;
  }

  /** An assistant's threads: those its runs ran on, and those whose metadata names it (any owner). */
  async ofAssistant(assistantId: string): Promise<string[]> {
    const { rows } = await this.#sql.query<{ thread_id: string }>(
      "SELECT DISTINCT thread_id FROM runs WHERE assistant_id = $1 UNION SELECT thread_id FROM threads WHERE metadata->>'assistant_id' = $1",
      [assistantId],
    );
    return rows.map((r) => r.thread_id);
  }

  /** Marks a thread `error` with `error` (its run died with the process that ran it). */
  async setError(id: string, error: unknown): Promise<void> {
    await this.#sql.query(
      "UPDATE threads SET status = 'error', error = $2::jsonb, updated_at = now() WHERE thread_id = $1",
      [id, jsonbText(error)],
    );
  }

  async setStatus(id: string, status: ThreadStatus, tx: SqlExecutor = this.#sql): Promise<void> {
    await tx.query("UPDATE threads SET status = $2, updated_at = now() WHERE thread_id = $1", [id, status]);
  }

  /**
   * Ends a thread's run whose end could not be recorded with its state: the thread is `error`
   * (with `error`) unless another of its runs is in flight (then it stays `busy`). Returns
   * whether it stays busy.
   */
  async endFailedRun(id: string, error: unknown, tx: SqlExecutor = this.#sql): Promise<boolean> {
    const { rows } = await tx.query<{ status: ThreadStatus }>(
      `UPDATE threads SET status = CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = $1 AND r.status IN ('pending', 'running')) THEN 'busy' ELSE 'error' END,
       error = $2::jsonb, updated_at = now() WHERE thread_id = $1 RETURNING status`,
      [id, this.#state(error)],
    );
    return rows[0]?.status === "busy";
  }

  /**
   * Frees threads left `busy` with no run in flight (a run whose end could not be recorded,
   * or data written before that was handled): each becomes `error` when its latest run ended
   * `error` or `timeout`, `interrupted` when its state waits on interrupts (as a run's end
   * leaves it), `idle` otherwise. Returns the ids freed.
   */
  async freeStranded(tx: SqlExecutor = this.#sql): Promise<string[]> {
    const inFlight =
      "EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.thread_id AND r.status IN ('pending', 'running'))";
    const { rows } = await tx.query<{ thread_id: string; last: string | null; interrupts: unknown }>(
      `SELECT t.thread_id, t.interrupts,
         (SELECT r.status FROM runs r WHERE r.thread_id = t.thread_id ORDER BY r.seq DESC LIMIT 1) AS last
       FROM threads t WHERE t.status = 'busy' AND NOT ${inFlight}`,
    );
    if (!rows.length) return [];
    // The interrupts are read here, not in SQL: sealed at rest, an empty set is not `{}`.
    const status = (r: (typeof rows)[number]): ThreadStatus => {
      if (r.last === "error" || r.last === "timeout") return "error";
      const interrupts = (this.#enc ? this.#enc.openJson(r.interrupts) : r.interrupts) as
        | Record<string, unknown[]>
        | null;
      return Object.values(interrupts ?? {}).some((list) => list?.length) ? "interrupted" : "idle";
    };
    const { rows: freed } = await tx.query<{ thread_id: string }>(
      `UPDATE threads t SET status = x.status, updated_at = now()
       FROM unnest($1::text[], $2::text[]) AS x(thread_id, status)
       WHERE t.thread_id = x.thread_id AND t.status = 'busy' AND NOT ${inFlight} RETURNING t.thread_id`,
      [rows.map((r) => r.thread_id), rows.map(status)],
    );
    return freed.map((r) => r.thread_id);
  }

  /** Records the thread's state after a run or a state update. */
  async saveState(
    id: string,
    s: { values: unknown; interrupts: Record<string, unknown[]>; status: ThreadStatus; error?: unknown; config?: Json },
    tx: SqlExecutor = this.#sql,
  ): Promise<void> {
    await tx.query(
      `UPDATE threads SET state_values = $2::jsonb, interrupts = $3::jsonb, status = $4, error = $5::jsonb,
       config = COALESCE($6::jsonb, config), updated_at = now(), state_updated_at = now() WHERE thread_id = $1`,
      [
        id,
        this.#state(s.values),
        this.#state(s.interrupts),
        s.status,
        this.#state(s.error),
        s.config ? jsonbText(s.config) : null,
      ],
    );
  }
}
