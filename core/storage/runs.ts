/**
 * Runs: the durable queue. A run is inserted `pending`, claimed by one worker (`running`,
 * with a lease the worker renews), and finished with a final status. At most one run per
 * thread is `running` (a unique partial index enforces it across replicas), and a thread's
 * pending runs are claimed in order.
 */
import type { SqlDriver, SqlExecutor } from "./sql.ts";
import { iso, type Json, type MultitaskStrategy, ownerClause, type Run, type RunStatus, type Scope } from "./records.ts";

interface RunRow extends Omit<Run, "created_at" | "updated_at"> {
  created_at: Date;
  updated_at: Date;
}

const toRun = (r: RunRow): Run => ({
  run_id: r.run_id,
  thread_id: r.thread_id,
  assistant_id: r.assistant_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  status: r.status,
  metadata: r.metadata,
  kwargs: r.kwargs,
  multitask_strategy: r.multitask_strategy,
  cancel_reason: r.cancel_reason ?? null,
  attempt: Number(r.attempt),
});

export const LEASE_SECONDS = 30;

export interface RunInput {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  metadata: Json;
  kwargs: Json;
  multitask_strategy: MultitaskStrategy | null;
  after_seconds?: number;
}

/** Run records and the queue operations. */
export class RunStore {
  readonly #sql: SqlDriver;
  constructor(sql: SqlDriver) {
    this.#sql = sql;
  }

  async insert(r: RunInput, tx: SqlExecutor = this.#sql): Promise<Run> {
    const { rows } = await tx.query<RunRow>(
      `INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, not_before)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, CASE WHEN $7::float8 > 0 THEN now() + make_interval(secs => $7::float8) END) RETURNING *`,
      [r.run_id, r.thread_id, r.assistant_id, JSON.stringify(r.metadata), JSON.stringify(r.kwargs), r.multitask_strategy, r.after_seconds ?? 0],
    );
    return toRun(rows[0]!);
  }

  /** Pending and running runs of a thread, oldest first. */
  async inflight(threadId: string, tx: SqlExecutor = this.#sql): Promise<Run[]> {
    const { rows } = await tx.query<RunRow>(
      "SELECT * FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY seq",
      [threadId],
    );
    return rows.map(toRun);
  }

  async get(runId: string, threadId?: string | null, scope?: Scope): Promise<Run | null> {
    const params: unknown[] = [runId];
    const where = ["run_id = $1"];
    if (threadId) where.push(`thread_id = $${params.push(threadId)}`);
    const owner = ownerClause(scope, params);
    if (owner) where.push(owner);
    const { rows } = await this.#sql.query<RunRow>(`SELECT * FROM runs WHERE ${where.join(" AND ")}`, params);
    return rows[0] ? toRun(rows[0]) : null;
  }

  async list(threadId: string, f: { limit: number; offset: number; status?: string }): Promise<Run[]> {
    const params: unknown[] = [threadId];
    const status = f.status ? ` AND status = $${params.push(f.status)}` : "";
    const { rows } = await this.#sql.query<RunRow>(
      `SELECT * FROM runs WHERE thread_id = $1${status} ORDER BY seq DESC LIMIT $${params.push(f.limit)} OFFSET $${params.push(f.offset)}`,
      params,
    );
    return rows.map(toRun);
  }

  async delete(runId: string): Promise<boolean> {
    const { rowCount } = await this.#sql.query("DELETE FROM runs WHERE run_id = $1", [runId]);
    await this.#sql.query("DELETE FROM run_events WHERE run_id = $1", [runId]);
    return rowCount > 0;
  }

  /**
   * Claims the next runnable pending run (or exactly `runId` when given and runnable):
   * the oldest pending run of a thread that has no running run. Null when none.
   */
  async claim(runId?: string): Promise<Run | null> {
    const params: unknown[] = [LEASE_SECONDS];
    const only = runId ? ` AND r.run_id = $${params.push(runId)}` : "";
    try {
      const { rows } = await this.#sql.query<RunRow>(
        `UPDATE runs SET status = 'running', attempt = attempt + 1, updated_at = now(), lease_until = now() + make_interval(secs => $1::float8)
         WHERE run_id = (
           SELECT r.run_id FROM runs r WHERE r.status = 'pending'${only}
             AND (r.not_before IS NULL OR r.not_before <= now())
             AND NOT EXISTS (SELECT 1 FROM runs x WHERE x.thread_id = r.thread_id AND x.status = 'running')
             AND NOT EXISTS (SELECT 1 FROM runs y WHERE y.thread_id = r.thread_id AND y.status = 'pending' AND y.seq < r.seq)
           ORDER BY r.seq LIMIT 1 FOR UPDATE SKIP LOCKED
         ) AND status = 'pending' RETURNING *`,
        params,
      );
      return rows[0] ? toRun(rows[0]) : null;
    } catch (err) {
      if ((err as { code?: string }).code === "23505") return null;
      throw err;
    }
  }

  /** Seconds until the earliest delayed pending run becomes runnable, or null. */
  async nextDelay(): Promise<number | null> {
    const { rows } = await this.#sql.query<{ s: number | null }>(
      "SELECT EXTRACT(EPOCH FROM min(not_before) - now())::float8 AS s FROM runs WHERE status = 'pending' AND not_before > now()",
    );
    const s = rows[0]?.s;
    return s === null || s === undefined ? null : Math.max(0, Number(s));
  }

  /** Sets a final (or pending/interrupted) status; `fromStatuses` guards the transition. */
  async setStatus(
    runId: string,
    status: RunStatus,
    opts: { fromStatuses?: RunStatus[]; cancelReason?: string | null } = {},
    tx: SqlExecutor = this.#sql,
  ): Promise<Run | null> {
    const params: unknown[] = [runId, status, opts.cancelReason ?? null];
    const guard = opts.fromStatuses ? ` AND status = ANY($${params.push(opts.fromStatuses)}::text[])` : "";
    const { rows } = await tx.query<RunRow>(
      `UPDATE runs SET status = $2, cancel_reason = COALESCE($3, cancel_reason), lease_until = NULL, updated_at = now()
       WHERE run_id = $1${guard} RETURNING *`,
      params,
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  async renewLeases(runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.#sql.query(
      "UPDATE runs SET lease_until = now() + make_interval(secs => $2::float8) WHERE run_id = ANY($1::text[]) AND status = 'running'",
      [runIds, LEASE_SECONDS],
    );
  }

  /**
   * Runs left `running` by a stopped server: every running run when `all` (a single embedded
   * server owns its data), else those whose lease expired. They are failed, never left stuck.
   */
  async recoverOrphans(all: boolean): Promise<Run[]> {
    const { rows } = await this.#sql.query<RunRow>(
      `UPDATE runs SET status = 'error', lease_until = NULL, updated_at = now()
       WHERE status = 'running'${all ? "" : " AND lease_until < now()"} RETURNING *`,
    );
    return rows.map(toRun);
  }
}
