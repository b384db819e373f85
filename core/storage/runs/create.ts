/**
 * Creating a run on an existing thread, in one statement: the thread locked and checked
 * (owner, runs in flight, the caller's queue, the assistant still current), the run inserted
 * (`running` when it can start at once), its first event logged and the thread marked busy.
 */
import type { Json, Run } from "../records.ts";
import { type RunInput, runParams, type RunRow, type RunsContext, storedPatch, toRun } from "./rows.ts";

/** How a run is created on its thread (see {@link createOnThread}). */
export interface CreateOnThreadOptions {
  owner: string | null;
  claim: boolean;
  threadPatch: Json;
  maxRunningPerOwner?: number;
  queued?: { identity: string; max: number } | null;
  /** Seconds a run queued (not claimed) on a free thread is kept for this store's claims (see RunStore.claim); 0: none. */
  affinitySeconds?: number;
  /**
   * A condition (./assistants.ts `currentCheck`, its parameters pushed onto the
   * statement's) that the run's assistant as the caller knows it is current: when false,
   * nothing is inserted and `assistantStale` is true.
   */
  assistantCurrent?: (params: unknown[]) => string;
}

/** What creating a run on a thread did: `thread` null when it does not exist, `run` null when nothing was inserted. */
export interface CreatedOnThread {
  thread: { metadata: Json; busy: boolean } | null;
  run: Run | null;
  overQueued?: number;
  affine?: boolean;
  assistantStale?: boolean;
  threadEmpty?: boolean;
}

/** The statement's conditions, as SQL over its parameters. */
interface Conditions {
  now: string;
  affine: string;
  current: string;
}

/** See RunStore.createOnThread. */
export async function createOnThread(
  ctx: RunsContext,
  r: RunInput,
  opts: CreateOnThreadOptions,
): Promise<CreatedOnThread> {
  const params = [
    ...runParams(r, ctx.enc),
    opts.claim,
    opts.owner,
    ctx.leaseSeconds,
    storedPatch(opts.threadPatch, ctx.enc),
    opts.maxRunningPerOwner ?? 0,
    ctx.holder,
    opts.queued?.identity ?? null,
    opts.queued?.max ?? 0,
    opts.affinitySeconds ?? 0,
    ctx.revision,
  ];
  const underCap =
    "($12::int = 0 OR $9::text IS NULL OR (SELECT count(*) FROM runs o WHERE o.status = 'running' AND o.metadata->>'owner' = $9::text) < $12::int)";
  const now = `($8::boolean AND NOT ok.busy AND $7::float8 <= 0 AND ${underCap})`;
  // Queued on a free thread, not delayed: held for this replica's workers a moment (see claim).
  const affine = `($16::float8 > 0 AND NOT ${now} AND NOT ok.busy AND $7::float8 <= 0)`;
  const current = opts.assistantCurrent?.(params) ?? "true";
  const sql = { now, affine, current };
  // Concurrent creations on one thread queue on the row lock; a statement that waited still
  // sees the runs as of its start, so it may try to start a second running run, which the
  // unique index refuses. Then it runs again, now seeing the other run (busy).
  for (let attempt = 1;; attempt++) {
    try {
      return await createStatement(ctx, params, sql);
    } catch (err) {
      if (attempt >= 5 || (err as { constraint?: string }).constraint !== "runs_one_running_per_thread") throw err;
    }
  }
}

async function createStatement(
  ctx: RunsContext,
  params: unknown[],
  { now, affine, current }: Conditions,
): Promise<CreatedOnThread> {
  const { rows } = await ctx.sql.query<
    RunRow & {
      thread_metadata: Json | null;
      thread_busy: boolean | null;
      queued: string | null;
      assistant_current: boolean;
      thread_empty: boolean | null;
    }
  >(
    `WITH t AS (
       SELECT thread_id, metadata, EXISTS (SELECT 1 FROM runs x WHERE x.thread_id = threads.thread_id AND x.status IN ('pending', 'running')) AS busy,
         ${current} AS assistant_current,
         CASE WHEN $14::text IS NOT NULL AND $15::int > 0 THEN (SELECT count(*) FROM runs q WHERE q.status = 'pending' AND q.metadata->>'owner' = $14::text) END AS queued,
         CASE WHEN $8::boolean THEN NOT EXISTS (SELECT 1 FROM checkpoints k WHERE k.thread_id = threads.thread_id) END AS thread_empty
       FROM threads WHERE thread_id = $2 FOR UPDATE
     ), ok AS (
       SELECT * FROM t WHERE t.assistant_current AND ($9::text IS NULL OR t.metadata->>'owner' = $9::text) AND NOT (t.busy AND $6::text = 'reject') AND (t.queued IS NULL OR t.queued < $15::int)
     ), ins AS (
       INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, not_before, status, attempt, lease_until, lease_holder, revision)
       SELECT $1, ok.thread_id, $3, $4::jsonb, $5::jsonb, $6, CASE WHEN $7::float8 > 0 THEN now() + make_interval(secs => $7::float8) END,
         CASE WHEN ${now} THEN 'running' ELSE 'pending' END, CASE WHEN ${now} THEN 1 ELSE 0 END,
         CASE WHEN ${now} THEN now() + make_interval(secs => $10::float8) WHEN ${affine} THEN now() + make_interval(secs => $16::float8) END,
         CASE WHEN ${now} OR ${affine} THEN $13 END, $17::text
       FROM ok RETURNING *
     ), ev AS (
       INSERT INTO run_events (run_id, seq, event, data)
       SELECT run_id, 1, 'metadata', '{"run_id":"' || run_id || '","attempt":1}' FROM ins WHERE status = 'running'
     ), upd AS (
       UPDATE threads SET status = 'busy', metadata = metadata || $11::jsonb, updated_at = now() WHERE thread_id = $2 AND EXISTS (SELECT 1 FROM ins)
     )
     SELECT t.metadata AS thread_metadata, t.busy AS thread_busy, t.queued, t.assistant_current, t.thread_empty, ins.* FROM t LEFT JOIN ins ON true`,
    params,
  );
  const row = rows[0];
  if (!row) return { thread: null, run: null };
  if (row.assistant_current === false) return { thread: null, run: null, assistantStale: true };
  const metadata = row.thread_metadata ?? {};
  const queued = row.queued === null ? null : Number(row.queued);
  const overQueued = queued !== null && queued >= (params[14] as number) ? queued : undefined;
  return {
    thread: { metadata: ctx.enc ? ctx.enc.openKeys(metadata) : metadata, busy: Boolean(row.thread_busy) },
    run: row.run_id ? toRun(row, ctx.enc) : null,
    ...(row.run_id && row.status === "running" && row.thread_empty ? { threadEmpty: true } : {}),
    ...(overQueued !== undefined ? { overQueued } : {}),
    ...(row.run_id && row.status === "pending" && row.lease_holder === ctx.holder ? { affine: true } : {}),
  };
}
