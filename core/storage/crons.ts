/**
 * Crons: scheduled runs of an assistant, on a thread of their own or (stateless) on a new
 * thread per firing. A firing is taken by one replica only: `takeDue` locks a due row with
 * `FOR UPDATE SKIP LOCKED` inside the caller's transaction, which also inserts the run and
 * moves `next_run_date` on before it commits. With encryption at rest, the payload (the runs'
 * input and config) and the creator are sealed, as are the metadata keys of `LANGGRAPH_AES_JSON_KEYS`.
 */
import { agentcliError, SearchEncrypted } from "../kernel/index.ts";
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlDriver, SqlExecutor } from "./sql.ts";
import { iso, type Json, ownerClause, type Scope, sortClause } from "./records.ts";
import { jsonbText } from "./jsonb.ts";

/** A cron as the API returns it (LangGraph's `Cron`). */
export interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  on_run_completed: "delete" | "keep" | null;
  end_time: string | null;
  schedule: string;
  timezone: string | null;
  created_at: string;
  updated_at: string;
  payload: Json;
  user_id: string | null;
  next_run_date: string | null;
  metadata: Json;
  enabled: boolean;
}

/** A cron with the user its runs act as (never returned over the API). */
export type CronRecord = Cron & { auth_user: Json | null };

interface CronRow extends Omit<CronRecord, "created_at" | "updated_at" | "end_time" | "next_run_date"> {
  created_at: Date;
  updated_at: Date;
  end_time: Date | null;
  next_run_date: Date | null;
}

const toRecord = (r: CronRow, enc: AtRestEncryption | null): CronRecord => ({
  cron_id: r.cron_id,
  assistant_id: r.assistant_id,
  thread_id: r.thread_id ?? null,
  on_run_completed: r.on_run_completed ?? null,
  end_time: r.end_time ? iso(r.end_time) : null,
  schedule: r.schedule,
  timezone: r.timezone ?? null,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  payload: (enc ? enc.openJson(r.payload) : r.payload) ?? {},
  user_id: r.user_id ?? null,
  next_run_date: r.next_run_date ? iso(r.next_run_date) : null,
  metadata: (enc ? enc.openKeys(r.metadata) : r.metadata) ?? {},
  enabled: Boolean(r.enabled),
  auth_user: (enc ? enc.openJson(r.auth_user) : r.auth_user) ?? null,
});

/** The API's view of a cron record. */
export function cronToWire(r: CronRecord): Cron {
  const { auth_user: _private, ...wire } = r;
  return wire;
}

export interface CronFilter {
  assistant_id?: string;
  thread_id?: string;
  enabled?: boolean;
  metadata?: Json;
}

export const CRON_SORT_COLUMNS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "created_at",
  "updated_at",
  "next_run_date",
] as const;

/** The columns a cron update may set. */
export type CronPatch = Partial<
  Pick<
    CronRecord,
    "schedule" | "timezone" | "end_time" | "payload" | "metadata" | "on_run_completed" | "enabled" | "next_run_date"
  >
>;

/** Cron records and the due-firing claim. */
export class CronStore {
  readonly #sql: SqlDriver;
  readonly #enc: AtRestEncryption | null;
  constructor(sql: SqlDriver, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
  }

  #seal(column: "payload" | "metadata" | "auth_user", value: unknown): string | null {
    if (value === null || value === undefined) return null;
    const e = this.#enc;
    return jsonbText(!e ? value : column === "metadata" ? e.sealKeys(value as Json) : e.sealJson(value));
  }

  #toRecord = (r: CronRow): CronRecord => toRecord(r, this.#enc);

  async create(c: Omit<CronRecord, "created_at" | "updated_at">): Promise<CronRecord> {
    const { rows } = await this.#sql.query<CronRow>(
      `INSERT INTO crons (cron_id, assistant_id, thread_id, user_id, auth_user, schedule, timezone, end_time, payload, metadata, on_run_completed, enabled, next_run_date)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13) RETURNING *`,
      [
        c.cron_id,
        c.assistant_id,
        c.thread_id,
        c.user_id,
        this.#seal("auth_user", c.auth_user),
        c.schedule,
        c.timezone,
        c.end_time,
        this.#seal("payload", c.payload),
        this.#seal("metadata", c.metadata),
        c.on_run_completed,
        c.enabled,
        c.next_run_date,
      ],
    );
    return this.#toRecord(rows[0]!);
  }

  async get(id: string, scope?: Scope, tx: SqlExecutor = this.#sql): Promise<CronRecord | null> {
    const params: unknown[] = [id];
    const owner = ownerClause(scope, params);
    const { rows } = await tx.query<CronRow>(
      `SELECT * FROM crons WHERE cron_id = $1${owner ? ` AND ${owner}` : ""}`,
      params,
    );
    return rows[0] ? this.#toRecord(rows[0]) : null;
  }

  #where(f: CronFilter, scope: Scope | undefined, params: unknown[]): string {
    const where: string[] = [];
    const sealed = this.#enc?.filteredKeys(f.metadata) ?? [];
    if (sealed.length) {
      throw agentcliError(SearchEncrypted, {
        what: "crons",
        by: `metadata key ${sealed.map((k) => `"${k}"`).join(", ")}`,
        keys: "LANGGRAPH_AES_JSON_KEYS",
      });
    }
    if (f.assistant_id) where.push(`assistant_id = $${params.push(f.assistant_id)}`);
    if (f.thread_id) where.push(`thread_id = $${params.push(f.thread_id)}`);
    if (f.enabled !== undefined) where.push(`enabled = $${params.push(f.enabled)}`);
    if (f.metadata && Object.keys(f.metadata).length) {
      where.push(`metadata @> $${params.push(jsonbText(f.metadata))}::jsonb`);
    }
    const owner = ownerClause(scope, params);
    if (owner) where.push(owner);
    return where.length ? `WHERE ${where.join(" AND ")}` : "";
  }

  async search(
    f: CronFilter & { limit: number; offset: number; sort_by?: string; sort_order?: string },
    scope?: Scope,
  ): Promise<CronRecord[]> {
    const params: unknown[] = [];
    const where = this.#where(f, scope, params);
    const order = sortClause(f, { allowed: CRON_SORT_COLUMNS, fallback: "created_at" });
    const { rows } = await this.#sql.query<CronRow>(
      `SELECT * FROM crons ${where} ORDER BY ${order}, cron_id LIMIT $${params.push(f.limit)} OFFSET $${
        params.push(f.offset)
      }`,
      params,
    );
    return rows.map(this.#toRecord);
  }

  async count(f: CronFilter, scope?: Scope): Promise<number> {
    const params: unknown[] = [];
    const { rows } = await this.#sql.query<{ n: string }>(
      `SELECT count(*) AS n FROM crons ${this.#where(f, scope, params)}`,
      params,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Sets the given columns; null when the cron does not exist (for `scope`). */
  /** Applies a patch (in `tx` when given; only a cron `scope` sees); null when there is none. */
  async update(
    id: string,
    patch: CronPatch,
    { scope, tx = this.#sql }: { scope?: Scope; tx?: SqlExecutor } = {},
  ): Promise<CronRecord | null> {
    const params: unknown[] = [id];
    const sets: string[] = [];
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) continue;
      const json = k === "payload" || k === "metadata";
      sets.push(
        `${k} = $${params.push(json ? this.#seal(k as "payload" | "metadata", v) : v)}${json ? "::jsonb" : ""}`,
      );
    }
    const owner = ownerClause(scope, params);
    const { rows } = await tx.query<CronRow>(
      `UPDATE crons SET ${[...sets, "updated_at = now()"].join(", ")} WHERE cron_id = $1${
        owner ? ` AND ${owner}` : ""
      } RETURNING *`,
      params,
    );
    return rows[0] ? this.#toRecord(rows[0]) : null;
  }

  async delete(id: string, scope?: Scope): Promise<boolean> {
    const params: unknown[] = [id];
    const owner = ownerClause(scope, params);
    const { rowCount } = await this.#sql.query(
      `DELETE FROM crons WHERE cron_id = $1${owner ? ` AND ${owner}` : ""}`,
      params,
    );
    return rowCount > 0;
  }

  /**
   * Locks the next due cron (enabled, `next_run_date` passed) that no other transaction holds,
   * with the database's clock; null when none. Call inside a transaction and move its
   * `next_run_date` on in the same one.
   */
  async takeDue(tx: SqlExecutor): Promise<(CronRecord & { now: string }) | null> {
    const { rows } = await tx.query<CronRow & { now: Date }>(
      "SELECT *, now() AS now FROM crons WHERE enabled AND next_run_date <= now() ORDER BY next_run_date LIMIT 1 FOR UPDATE SKIP LOCKED",
    );
    return rows[0] ? { ...this.#toRecord(rows[0]), now: iso(rows[0].now) } : null;
  }

  /** Seconds until the earliest enabled cron is due (0 when one is), or null when none is scheduled. */
  async nextDue(): Promise<number | null> {
    const { rows } = await this.#sql.query<{ s: number | null }>(
      "SELECT EXTRACT(EPOCH FROM min(next_run_date) - now())::float8 AS s FROM crons WHERE enabled AND next_run_date IS NOT NULL",
    );
    const s = rows[0]?.s;
    return s === null || s === undefined ? null : Math.max(0, Number(s));
  }
}
