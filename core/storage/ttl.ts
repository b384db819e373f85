/**
 * Time-to-live of threads, store items and stream logs, and the sweep that deletes expired
 * ones. A run's stream log (run_event_batches, run_events) is kept a retention after the run ended. A thread
 * expires `ttl_minutes` after its last update (a run, a state or metadata change); an item
 * `ttl_minutes` after its last write, or at `expires_at` when a read refreshed it later.
 * A NULL `ttl_minutes` means the server's default (none unless configured); 0 on an item
 * means never. Each sweep batch is one statement that locks its rows with `SKIP LOCKED`, so
 * replicas sweeping together never delete (or report) the same row twice.
 */
import type { SqlExecutor } from "./sql.ts";

/** The TTLs of store items and threads, and their sweeps (`storage.ttl`). */
export class TtlStore {
  readonly #sql: SqlExecutor;
  constructor(sql: SqlExecutor) {
    this.#sql = sql;
  }
  /** Sets a just-written item's TTL: minutes, null for never, undefined for the server's default. */
  setItem(namespace: string[], key: string, ttl: number | null | undefined): Promise<void> {
    return setItemTtl(this.#sql, { namespace, key, ttl });
  }
  /** Pushes the expiry of items that have a TTL to a full TTL from now (a read with `refresh_ttl`). */
  refreshItems(items: Array<{ namespace: string[]; key: string }>, defaultMinutes: number | null): Promise<void> {
    return refreshItemTtl(this.#sql, items, defaultMinutes);
  }
  /** Deletes up to `batch` expired store items; resolves how many. */
  sweepItems(defaultMinutes: number | null, batch?: number): Promise<number> {
    return sweepItems(this.#sql, defaultMinutes, batch);
  }
  /** Deletes up to `batch` expired threads without runs in flight (see {@link sweepThreads}); resolves their ids. */
  sweepThreads(defaultMinutes: number | null, batch?: number): Promise<string[]> {
    return sweepThreads(this.#sql, defaultMinutes, batch);
  }
  /** Deletes the stream logs of up to `batch` runs that ended `retentionSeconds` ago or are gone (see {@link sweepRunEvents}); resolves how many. */
  sweepRunEvents(retentionSeconds: number, batch?: number): Promise<number> {
    return sweepRunEvents(this.#sql, retentionSeconds, batch);
  }
}

/** SQL of an item's effective expiry, with the default TTL (minutes, or null) as parameter `$n`. */
const itemExpiry = (n: number) =>
  `GREATEST(expires_at, updated_at + NULLIF(COALESCE(ttl_minutes, $${n}::float8), 0) * interval '1 minute')`;

/** Sets a just-written item's TTL: minutes, null for never, undefined for the server's default. */
async function setItemTtl(
  sql: SqlExecutor,
  { namespace, key, ttl }: { namespace: string[]; key: string; ttl: number | null | undefined },
): Promise<void> {
  await sql.query(
    "UPDATE store_items SET ttl_minutes = $3, expires_at = NULL WHERE namespace = $1 AND key = $2",
    [namespace, key, ttl === null ? 0 : (ttl ?? null)],
  );
}

/** Pushes the expiry of items that have a TTL to a full TTL from now (a read with `refresh_ttl`). */
async function refreshItemTtl(
  sql: SqlExecutor,
  items: Array<{ namespace: string[]; key: string }>,
  defaultMinutes: number | null,
): Promise<void> {
  if (items.length === 0) return;
  await sql.query(
    `UPDATE store_items s SET expires_at = now() + NULLIF(COALESCE(s.ttl_minutes, $2::float8), 0) * interval '1 minute'
     FROM jsonb_to_recordset($1::jsonb) AS x(namespace text[], key text)
     WHERE s.namespace = x.namespace AND s.key = x.key AND NULLIF(COALESCE(s.ttl_minutes, $2::float8), 0) IS NOT NULL`,
    [JSON.stringify(items.map((i) => ({ namespace: i.namespace, key: i.key }))), defaultMinutes],
  );
}

/** Deletes up to `batch` expired store items; resolves how many. */
async function sweepItems(sql: SqlExecutor, defaultMinutes: number | null, batch = 1000): Promise<number> {
  const { rowCount } = await sql.query(
    `DELETE FROM store_items WHERE (namespace, key) IN (
       SELECT namespace, key FROM store_items WHERE ${itemExpiry(1)} < now() LIMIT $2 FOR UPDATE SKIP LOCKED
     )`,
    [defaultMinutes, batch],
  );
  return rowCount;
}

/**
 * Deletes up to `batch` expired threads that have no run pending or running, with their runs
 * (by cascade), the runs' stream logs and their crons; resolves their ids, whose checkpoints
 * and sandboxes the caller deletes next.
 */
async function sweepThreads(sql: SqlExecutor, defaultMinutes: number | null, batch = 100): Promise<string[]> {
  const { rows } = await sql.query<{ thread_id: string }>(
    `WITH gone AS (
       DELETE FROM threads WHERE thread_id IN (
         SELECT t.thread_id FROM threads t
         WHERE COALESCE(t.ttl_minutes, $1::float8) > 0
           AND t.updated_at < now() - COALESCE(t.ttl_minutes, $1::float8) * interval '1 minute'
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.thread_id AND r.status IN ('pending', 'running'))
         ORDER BY t.updated_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ) RETURNING thread_id
     ), ev AS (
       DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM runs WHERE thread_id IN (SELECT thread_id FROM gone))
     ), eb AS (
       DELETE FROM run_event_batches WHERE run_id IN (SELECT run_id FROM runs WHERE thread_id IN (SELECT thread_id FROM gone))
     )
     SELECT thread_id FROM gone`,
    [defaultMinutes, batch],
  );
  return rows.map((r) => r.thread_id);
}

/**
 * Deletes the stream logs of up to `batch` runs: those that ended (any status but pending and
 * running) at least `retentionSeconds` ago (a run's `updated_at` is its end), and those whose
 * run is gone (a deleted thread's, a stateless run's temporary thread's). Driven by the log,
 * which holds only the runs in flight and those ended within the retention, not by the runs
 * (kept for good). Replicas sweeping together may pick the same run: the second delete finds
 * nothing left.
 */
async function sweepRunEvents(sql: SqlExecutor, retentionSeconds: number, batch = 500): Promise<number> {
  const { rows } = await sql.query<{ n: string | number }>(
    `WITH gone AS (
       SELECT e.run_id FROM (SELECT run_id FROM run_events UNION SELECT run_id FROM run_event_batches) e
         LEFT JOIN runs r ON r.run_id = e.run_id
       WHERE r.run_id IS NULL
          OR (r.status NOT IN ('pending', 'running') AND r.updated_at <= now() - $1::float8 * interval '1 second')
       LIMIT $2
     ), d AS (
       DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM gone)
     ), db AS (
       DELETE FROM run_event_batches WHERE run_id IN (SELECT run_id FROM gone)
     )
     SELECT count(*) AS n FROM gone`,
    [retentionSeconds, batch],
  );
  return Number(rows[0]?.n ?? 0);
}
