/**
 * Ending a run: its last events, its thread's state and its final status in one statement
 * (with the checkpointer's pending writes), or a status set on its own.
 */
import { packBatch, type RunEvent } from "../run-events.ts";
import { spansInsert, type StoredTrace } from "../run-spans.ts";
import type { SqlExecutor } from "../sql.ts";
import type { Run, RunStatus } from "../records.ts";
import { type DeferredUsage, usageInsert } from "../usage.ts";
import { type RunRow, type RunsContext, storedState, toRun } from "./rows.ts";

/** A run's end: see {@link completeRun}. */
export interface RunEnd {
  run: { run_id: string; thread_id: string };
  end: {
    status: RunStatus;
    values: unknown;
    interrupts: Record<string, unknown[]>;
    threadStatus: string;
    error: unknown;
  };
  /** The run's stream events to write (one batch): those not logged yet, or its whole log compacted (`replace`). */
  events: readonly RunEvent[];
  /** `events` are the run's whole log (compacted): what was logged of it before is deleted. */
  replace?: boolean;
  /** SqlCheckpointSaver.flushWith's builder: the checkpointer's pending writes. */
  checkpoints?: ((params: unknown[]) => string[]) | null;
  /** The run's trace (../run-spans.ts), written in the same statement. */
  trace?: StoredTrace | null;
  /** The run's model calls not recorded as they came (../usage.ts), written in the same statement. */
  usage?: DeferredUsage | null;
}

/** A status change: see {@link setRunStatus}. */
export interface StatusChange {
  status: RunStatus;
  /** Only from these statuses (the transition's guard). */
  fromStatuses?: RunStatus[];
  cancelReason?: string | null;
  /** The transaction to run in (the store's driver when absent). */
  tx?: SqlExecutor;
}

/**
 * Records the end of a run in one statement: its last stream events (its whole log, compacted,
 * with `replace`), its trace's spans, its deferred usage, the thread's state
 * (`busy` while other runs of the thread are in flight) and the run's final status (only
 * from `running`). Resolves whether other runs of the thread are in flight, and `lost`:
 * another replica took the run over (its lease had expired), so nothing was written.
 * `checkpoints` (SqlCheckpointSaver.flushWith's builder) adds the checkpointer's pending
 * writes to the statement; they are written even when the run was lost, as a flush would.
 */
export async function completeRun(ctx: RunsContext, ending: RunEnd): Promise<{ busy: boolean; lost: boolean }> {
  const { run, end, events } = ending;
  const checkpoints = ending.checkpoints ?? null;
  const params: unknown[] = [
    run.run_id,
    run.thread_id,
    end.status,
    storedState(end.values, ctx.enc),
    storedState(end.interrupts, ctx.enc),
    end.threadStatus,
    storedState(end.error, ctx.enc),
    ctx.holder,
  ];
  // The checkpointer's pending writes (see SqlCheckpointSaver.flushWith), in the same statement.
  const saved = (checkpoints?.(params) ?? []).map((w, i) => `cp${i} AS (${w}), `).join("");
  // A run another replica holds now (it took the run over) is left to that replica.
  const lost =
    "EXISTS (SELECT 1 FROM runs l WHERE l.run_id = $1 AND l.status = 'running' AND l.lease_holder IS DISTINCT FROM $8 AND l.lease_holder IS NOT NULL)";
  // The events as one batch; with `replace`, the run's earlier rows go (the deletes do not see
  // the batch inserted by the same statement).
  const batch = events.length ? packBatch(events, ctx.enc) : null;
  const log = batch
    ? `ev AS (INSERT INTO run_event_batches (run_id, seq, events) SELECT $1, $${params.push(batch.seq)}::int, $${
      params.push(batch.text)
    } WHERE NOT ${lost}), `
    : "";
  const drop = ending.replace
    ? `db AS (DELETE FROM run_event_batches WHERE run_id = $1 AND NOT ${lost}), de AS (DELETE FROM run_events WHERE run_id = $1 AND NOT ${lost}), `
    : "";
  const spans = spansInsert({ trace: ending.trace ?? null, params, enc: ctx.enc, lost });
  const usage = usageInsert({ usage: ending.usage, params });
  const { rows } = await ctx.sql.query<{ busy: boolean | null; lost: boolean }>(
    `WITH ${saved}${log}${drop}${spans}${usage}r AS (
       UPDATE runs SET status = $3, lease_until = NULL, updated_at = now() WHERE run_id = $1 AND status = 'running' AND (lease_holder IS NULL OR lease_holder = $8) RETURNING run_id
     ), t AS (
       UPDATE threads SET state_values = $4::jsonb, interrupts = $5::jsonb, error = $7::jsonb, updated_at = now(), state_updated_at = now(),
         status = CASE WHEN EXISTS (SELECT 1 FROM runs o WHERE o.thread_id = $2 AND o.run_id <> $1 AND o.status IN ('pending', 'running')) THEN 'busy' ELSE $6 END
       WHERE thread_id = $2 AND NOT ${lost} RETURNING status
     ) SELECT (SELECT status = 'busy' FROM t) AS busy, ${lost} AS lost`,
    params,
  );
  return { busy: rows[0]?.busy === true, lost: rows[0]?.lost === true };
}

/** Sets a final (or pending/interrupted) status; `fromStatuses` guards the transition. */
export async function setRunStatus(ctx: RunsContext, runId: string, opts: StatusChange): Promise<Run | null> {
  const params: unknown[] = [runId, opts.status, opts.cancelReason ?? null];
  const guard = opts.fromStatuses ? ` AND status = ANY($${params.push(opts.fromStatuses)}::text[])` : "";
  const { rows } = await (opts.tx ?? ctx.sql).query<RunRow>(
    `UPDATE runs SET status = $2, cancel_reason = COALESCE($3, cancel_reason), lease_until = NULL, updated_at = now()
     WHERE run_id = $1${guard} RETURNING *`,
    params,
  );
  return rows[0] ? toRun(rows[0], ctx.enc) : null;
}
