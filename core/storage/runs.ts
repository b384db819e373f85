/**
 * Runs: the durable queue. A run is inserted `pending`, claimed by one worker (`running`,
 * with a lease the worker renews), and finished with a final status. At most one run per
 * thread is `running` (a unique partial index enforces it across replicas), and a thread's
 * pending runs are claimed in order.
 */
import type { AtRestEncryption } from "./encryption.ts";
import type { RunEvent } from "./run-events.ts";
import type { SqlDriver, SqlExecutor } from "./sql.ts";
import { replicaId } from "./lease.ts";
import {
  iso,
  type Json,
  type MultitaskStrategy,
  ownerClause,
  type Run,
  type RunStatus,
  type Scope,
} from "./records.ts";

interface RunRow extends Omit<Run, "created_at" | "updated_at"> {
  created_at: Date;
  updated_at: Date;
  lease_holder?: string | null;
}

const toRun = (r: RunRow, enc: AtRestEncryption | null): Run => ({
  run_id: r.run_id,
  thread_id: r.thread_id,
  assistant_id: r.assistant_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  status: r.status,
  metadata: enc ? enc.openKeys(r.metadata) : r.metadata,
  kwargs: enc ? enc.openJson(r.kwargs) : r.kwargs,
  multitask_strategy: r.multitask_strategy,
  cancel_reason: r.cancel_reason ?? null,
  attempt: Number(r.attempt),
});

/**
 * Default seconds a run's lease lasts (`AGENTCLI_RUN_LEASE_SECONDS`): its worker renews it
 * every third of that; when a replica stops renewing (it died), another one takes the run
 * over this long after the last renewal and resumes it from its last checkpoint.
 */
export const DEFAULT_RUN_LEASE_SECONDS = 10;

/**
 * Default seconds a run queued on a full replica is kept for that replica's own workers
 * (`AGENTCLI_QUEUE_AFFINITY_SECONDS`, ../engine/queue/worker.ts): when one of them frees within that time it runs the
 * run, and the request waiting for it there follows it in memory; after it, any replica may
 * take the run (woken then), so a busy replica's queue is shared out at most this late.
 */
export const DEFAULT_QUEUE_AFFINITY_SECONDS = 0.3;
/** Attempts a run gets (its first, and takeovers after its replica died) before it ends `error`. */
export const MAX_RUN_ATTEMPTS = 3;

let stores = 0;

/**
 * A claimed run, with what the executor needs of its assistant and (from `claim`) its
 * thread's metadata, read in the same statement.
 */
export type ClaimedRun = Run & {
  assistant: { graph_id: string; config: Json; context: unknown } | null;
  threadMetadata?: Json;
  /** The thread had no checkpoint when the run was claimed (the statement that claimed it says so): its first read of one is skipped. */
  threadEmpty?: boolean;
};

export interface RunInput {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  metadata: Json;
  kwargs: Json;
  multitask_strategy: MultitaskStrategy | null;
  after_seconds?: number;
}

/** A running run another replica held whose lease expired, now held here (see {@link RunStore.takeOver}). */
export type TakenRun = ClaimedRun & { previous_holder: string | null };

/** Run records and the queue operations. */
export class RunStore {
  readonly #sql: SqlDriver;
  /** Who holds the leases of the runs this store claims (one per store: several servers may share a process). */
  readonly holder: string;
  /** Seconds a claimed run's lease lasts before it must be renewed. */
  leaseSeconds = DEFAULT_RUN_LEASE_SECONDS;
  readonly #enc: AtRestEncryption | null;

  constructor(sql: SqlDriver, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
    this.holder = `${replicaId()}:${++stores}`;
  }

  /** A run's metadata and kwargs as stored (JSON text): sealed with encryption at rest. */
  #stored(r: RunInput): [string, string] {
    const e = this.#enc;
    return [
      JSON.stringify(e ? e.sealKeys(r.metadata) : r.metadata),
      JSON.stringify(e ? e.sealJson(r.kwargs) : r.kwargs),
    ];
  }

  /** A thread metadata patch as stored. */
  #patch(patch: Json): string {
    return JSON.stringify(this.#enc ? this.#enc.sealKeys(patch) : patch);
  }

  /** The stored form of a JSON state column (values, interrupts, error). */
  #state(value: unknown): string {
    return JSON.stringify(
      this.#enc && value !== null && value !== undefined ? this.#enc.sealJson(value) : value ?? null,
    );
  }

  #toRun(r: RunRow): Run {
    return toRun(r, this.#enc);
  }

  /**
   * Inserts a pending run. With `threadPatch`, the same statement marks its thread `busy`
   * and merges the patch into the thread's metadata.
   */
  async insert(r: RunInput, tx: SqlExecutor = this.#sql, threadPatch?: Json): Promise<Run> {
    const params = [
      r.run_id,
      r.thread_id,
      r.assistant_id,
      ...this.#stored(r),
      r.multitask_strategy,
      r.after_seconds ?? 0,
    ];
    const busy = threadPatch
      ? `WITH busy AS (UPDATE threads SET status = 'busy', metadata = metadata || $${
        params.push(this.#patch(threadPatch))
      }::jsonb, updated_at = now() WHERE thread_id = $2) `
      : "";
    const { rows } = await tx.query<RunRow>(
      `${busy}INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, not_before)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, CASE WHEN $7::float8 > 0 THEN now() + make_interval(secs => $7::float8) END) RETURNING *`,
      params,
    );
    return this.#toRun(rows[0]!);
  }

  /**
   * Creates a run on an existing thread in one statement: locks the thread, checks its
   * owner and whether runs are in flight (`reject` inserts nothing then), inserts the run
   * and marks the thread busy (merging `threadPatch` into its metadata). With `claim`, a run
   * that can start at once is inserted `running` (leased to the caller, its `metadata`
   * stream event logged), saving the claim. `thread` is null when the thread does not exist;
   * `run` is null when the owner differs or `reject` met a busy thread. With `queued`, no run
   * is inserted when that identity already has `max` runs pending: `overQueued` is then their
   * count (the check and the insert in one statement, not two). With `affinitySeconds`, a
   * run queued on a free thread (this replica is full) is held for this store's claims that
   * long (its `lease_holder` and `lease_until` while pending; `affine` in the result): its
   * follower here then gets its events from memory, not across replicas.
   */
  async createOnThread(
    r: RunInput,
    opts: {
      owner: string | null;
      claim: boolean;
      threadPatch: Json;
      maxRunningPerOwner?: number;
      queued?: { identity: string; max: number } | null;
      /** Seconds a run queued (not claimed) on a free thread is kept for this store's claims (see {@link claim}); 0: none. */
      affinitySeconds?: number;
      /**
       * A condition (./assistants.ts `currentCheck`, its parameters pushed onto the
       * statement's) that the run's assistant as the caller knows it is current: when false,
       * nothing is inserted and `assistantStale` is true.
       */
      assistantCurrent?: (params: unknown[]) => string;
    },
  ): Promise<
    {
      thread: { metadata: Json; busy: boolean } | null;
      run: Run | null;
      overQueued?: number;
      affine?: boolean;
      assistantStale?: boolean;
      threadEmpty?: boolean;
    }
  > {
    const params = [
      r.run_id,
      r.thread_id,
      r.assistant_id,
      ...this.#stored(r),
      r.multitask_strategy,
      r.after_seconds ?? 0,
      opts.claim,
      opts.owner,
      this.leaseSeconds,
      this.#patch(opts.threadPatch),
      opts.maxRunningPerOwner ?? 0,
      this.holder,
      opts.queued?.identity ?? null,
      opts.queued?.max ?? 0,
      opts.affinitySeconds ?? 0,
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
        return await this.#createOnThread(params, sql);
      } catch (err) {
        if (attempt >= 5 || (err as { constraint?: string }).constraint !== "runs_one_running_per_thread") throw err;
      }
    }
  }

  async #createOnThread(
    params: unknown[],
    { now, affine, current }: { now: string; affine: string; current: string },
  ): Promise<
    {
      thread: { metadata: Json; busy: boolean } | null;
      run: Run | null;
      overQueued?: number;
      affine?: boolean;
      assistantStale?: boolean;
      threadEmpty?: boolean;
    }
  > {
    const { rows } = await this.#sql.query<
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
         INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, not_before, status, attempt, lease_until, lease_holder)
         SELECT $1, ok.thread_id, $3, $4::jsonb, $5::jsonb, $6, CASE WHEN $7::float8 > 0 THEN now() + make_interval(secs => $7::float8) END,
           CASE WHEN ${now} THEN 'running' ELSE 'pending' END, CASE WHEN ${now} THEN 1 ELSE 0 END,
           CASE WHEN ${now} THEN now() + make_interval(secs => $10::float8) WHEN ${affine} THEN now() + make_interval(secs => $16::float8) END,
           CASE WHEN ${now} OR ${affine} THEN $13 END
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
      thread: { metadata: this.#enc ? this.#enc.openKeys(metadata) : metadata, busy: Boolean(row.thread_busy) },
      run: row.run_id ? this.#toRun(row) : null,
      ...(row.run_id && row.status === "running" && row.thread_empty ? { threadEmpty: true } : {}),
      ...(overQueued !== undefined ? { overQueued } : {}),
      ...(row.run_id && row.status === "pending" && row.lease_holder === this.holder ? { affine: true } : {}),
    };
  }

  /** How many runs of an owner are waiting (pending). */
  async pendingOf(owner: string): Promise<number> {
    const { rows } = await this.#sql.query<{ n: string }>(
      "SELECT count(*) AS n FROM runs WHERE status = 'pending' AND metadata->>'owner' = $1",
      [owner],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Pending and running runs of a thread, oldest first. */
  async inflight(threadId: string, tx: SqlExecutor = this.#sql): Promise<Run[]> {
    const { rows } = await tx.query<RunRow>(
      "SELECT * FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY seq",
      [threadId],
    );
    return rows.map((r) => this.#toRun(r));
  }

  /** Every pending and running run, or only those of `owner` (a user's metadata `owner`). */
  async inflightAll(owner?: string | null): Promise<Run[]> {
    const params: unknown[] = [];
    const { rows } = await this.#sql.query<RunRow>(
      `SELECT * FROM runs WHERE status IN ('pending', 'running')${
        owner ? ` AND metadata->>'owner' = $${params.push(owner)}` : ""
      }`,
      params,
    );
    return rows.map((r) => this.#toRun(r));
  }

  /** Records how a running run is being cancelled (`interrupt` or `rollback`), for whoever ends it. */
  async setCancelReason(runId: string, action: string): Promise<void> {
    await this.#sql.query("UPDATE runs SET cancel_reason = $2 WHERE run_id = $1 AND status = 'running'", [
      runId,
      action,
    ]);
  }

  /** Records the outcome of a run's webhook in its metadata (`webhook_delivery`). */
  async recordWebhookDelivery(runId: string, outcome: object): Promise<void> {
    await this.#sql.query(
      "UPDATE runs SET metadata = metadata || jsonb_build_object('webhook_delivery', $2::jsonb) WHERE run_id = $1",
      [runId, JSON.stringify(outcome)],
    );
  }

  async get(runId: string, threadId?: string | null, scope?: Scope): Promise<Run | null> {
    const params: unknown[] = [runId];
    const where = ["run_id = $1"];
    if (threadId) where.push(`thread_id = $${params.push(threadId)}`);
    const owner = ownerClause(scope, params);
    if (owner) where.push(owner);
    const { rows } = await this.#sql.query<RunRow>(`SELECT * FROM runs WHERE ${where.join(" AND ")}`, params);
    return rows[0] ? this.#toRun(rows[0]) : null;
  }

  async list(threadId: string, f: { limit: number; offset: number; status?: string }): Promise<Run[]> {
    const params: unknown[] = [threadId];
    const status = f.status ? ` AND status = $${params.push(f.status)}` : "";
    const { rows } = await this.#sql.query<RunRow>(
      `SELECT * FROM runs WHERE thread_id = $1${status} ORDER BY seq DESC LIMIT $${params.push(f.limit)} OFFSET $${
        params.push(f.offset)
      }`,
      params,
    );
    return rows.map((r) => this.#toRun(r));
  }

  /** Deletes a run and its stream log (in `tx` when given). */
  async delete(runId: string, tx: SqlExecutor = this.#sql): Promise<boolean> {
    const { rowCount } = await tx.query("DELETE FROM runs WHERE run_id = $1", [runId]);
    await tx.query("DELETE FROM run_events WHERE run_id = $1", [runId]);
    return rowCount > 0;
  }

  /**
   * Claims the next runnable pending run (or exactly `runId` when given and runnable): the
   * first pending run of a thread that has no running run, taken fairly between owners: the
   * owner with the fewest runs executing first, then the owner served longest ago (by
   * `recentOwners`, most recent first; owners not in it before all), then the oldest run;
   * owners at `maxRunningPerOwner` wait. A pending run a replica queued with affinity (see
   * {@link createOnThread}: `lease_holder` and `lease_until` of a pending run) is claimed
   * only by that replica until `lease_until`, by any replica after. Null when none.
   */
  async claim(
    runId?: string,
    opts: { maxRunningPerOwner?: number; recentOwners?: string[] } = {},
  ): Promise<ClaimedRun | null> {
    const params: unknown[] = [this.leaseSeconds, this.holder];
    const recent = `array_position($${
      params.push(opts.recentOwners ?? [])
    }::text[], r.metadata->>'owner') DESC NULLS FIRST`;
    const only = runId ? ` AND r.run_id = $${params.push(runId)}` : "";
    // Runs executing per owner, counted once (not once per pending run: the queue can be long).
    const running = "coalesce(k.n, 0)";
    const cap = opts.maxRunningPerOwner
      ? ` AND (r.metadata->>'owner' IS NULL OR ${running} < $${params.push(opts.maxRunningPerOwner)})`
      : "";
    try {
      // The claim also logs the run's first stream event (`metadata`), in the same statement.
      const { rows } = await this.#sql.query<
        RunRow & { assistant: ClaimedRun["assistant"]; thread_metadata: Json | null; thread_empty: boolean }
      >(
        `WITH k AS (
           SELECT metadata->>'owner' AS owner, count(*) AS n FROM runs WHERE status = 'running' GROUP BY 1
         ), c AS (
           UPDATE runs SET status = 'running', attempt = attempt + 1, updated_at = now(), lease_until = now() + make_interval(secs => $1::float8), lease_holder = $2
           WHERE run_id = (
             SELECT r.run_id FROM runs r LEFT JOIN k ON k.owner IS NOT DISTINCT FROM r.metadata->>'owner' WHERE r.status = 'pending'${only}
               AND (r.not_before IS NULL OR r.not_before <= now())
               AND (r.lease_holder IS NULL OR r.lease_holder = $2 OR r.lease_until IS NULL OR r.lease_until <= now())
               AND NOT EXISTS (SELECT 1 FROM runs x WHERE x.thread_id = r.thread_id AND x.status = 'running')
               AND NOT EXISTS (SELECT 1 FROM runs y WHERE y.thread_id = r.thread_id AND y.status = 'pending' AND y.seq < r.seq)${cap}
             ORDER BY ${running}, ${recent}, r.seq LIMIT 1 FOR UPDATE OF r SKIP LOCKED
           ) AND status = 'pending' RETURNING *
         ), ev AS (
           INSERT INTO run_events (run_id, seq, event, data)
           SELECT run_id, 1, 'metadata', '{"run_id":"' || run_id || '","attempt":' || attempt || '}' FROM c ON CONFLICT (run_id, seq) DO NOTHING
         )
         SELECT c.*, (SELECT json_build_object('graph_id', a.graph_id, 'config', a.config, 'context', a.context) FROM assistants a WHERE a.assistant_id = c.assistant_id) AS assistant,
           (SELECT t.metadata FROM threads t WHERE t.thread_id = c.thread_id) AS thread_metadata,
           NOT EXISTS (SELECT 1 FROM checkpoints k WHERE k.thread_id = c.thread_id) AS thread_empty FROM c`,
        params,
      );
      const row = rows[0];
      if (!row) return null;
      const { thread_metadata: threadMetadata, thread_empty: threadEmpty, ...run } = row;
      return {
        ...this.#toRun(run as RunRow),
        assistant: row.assistant ?? null,
        ...(threadMetadata ? { threadMetadata: this.#enc ? this.#enc.openKeys(threadMetadata) : threadMetadata } : {}),
        ...(threadEmpty ? { threadEmpty: true } : {}),
      };
    } catch (err) {
      if ((err as { code?: string }).code === "23505") return null;
      throw err;
    }
  }

  /**
   * Records the end of a run in one statement: its last stream events, the thread's state
   * (`busy` while other runs of the thread are in flight) and the run's final status (only
   * from `running`). Resolves whether other runs of the thread are in flight, and `lost`:
   * another replica took the run over (its lease had expired), so nothing was written.
   * `checkpoints` (SqlCheckpointSaver.flushWith's builder) adds the checkpointer's pending
   * writes to the statement; they are written even when the run was lost, as a flush would.
   */
  async complete(
    run: { run_id: string; thread_id: string },
    end: {
      status: RunStatus;
      values: unknown;
      interrupts: Record<string, unknown[]>;
      threadStatus: string;
      error: unknown;
    },
    events: readonly RunEvent[],
    checkpoints: ((params: unknown[]) => string[]) | null = null,
  ): Promise<{ busy: boolean; lost: boolean }> {
    const params: unknown[] = [
      run.run_id,
      run.thread_id,
      end.status,
      this.#state(end.values),
      this.#state(end.interrupts),
      end.threadStatus,
      this.#state(end.error),
      this.holder,
    ];
    const values = events.map((e) =>
      `($1, $${params.push(e.id)}::int, $${params.push(e.event)}, $${
        params.push(this.#enc ? this.#enc.sealText(e.data) : e.data)
      })`
    );
    // The checkpointer's pending writes (see SqlCheckpointSaver.flushWith), in the same statement.
    const saved = (checkpoints?.(params) ?? []).map((w, i) => `cp${i} AS (${w}), `).join("");
    // A run another replica holds now (it took the run over) is left to that replica.
    const lost =
      "EXISTS (SELECT 1 FROM runs l WHERE l.run_id = $1 AND l.status = 'running' AND l.lease_holder IS DISTINCT FROM $8 AND l.lease_holder IS NOT NULL)";
    const log = values.length
      ? `ev AS (INSERT INTO run_events (run_id, seq, event, data) SELECT * FROM (VALUES ${
        values.join(", ")
      }) v WHERE NOT ${lost} ON CONFLICT (run_id, seq) DO NOTHING), `
      : "";
    const { rows } = await this.#sql.query<{ busy: boolean | null; lost: boolean }>(
      `WITH ${saved}${log}r AS (
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
    return rows[0] ? this.#toRun(rows[0]) : null;
  }

  /**
   * Renews the leases of runs this store holds; returns the ids of those it no longer holds
   * (ended elsewhere, or taken over by another replica after the lease expired).
   */
  async renewLeases(runIds: string[]): Promise<string[]> {
    if (runIds.length === 0) return [];
    const { rows } = await this.#sql.query<{ run_id: string }>(
      `UPDATE runs SET lease_until = now() + make_interval(secs => $2::float8)
       WHERE run_id = ANY($1::text[]) AND status = 'running' AND (lease_holder IS NULL OR lease_holder = $3) RETURNING run_id`,
      [runIds, this.leaseSeconds, this.holder],
    );
    const held = new Set(rows.map((r) => r.run_id));
    return runIds.filter((id) => !held.has(id));
  }

  /**
   * Hands runs this store holds back to the queue's other replicas (a stopping replica that
   * could not finish them): their leases expire now, so another replica takes them over
   * (and resumes them) on its next lease check.
   */
  async handBack(runIds: string[]): Promise<void> {
    if (!runIds.length) return;
    await this.#sql.query(
      "UPDATE runs SET lease_until = now() - interval '1 second' WHERE run_id = ANY($1::text[]) AND status = 'running' AND lease_holder = $2",
      [runIds, this.holder],
    );
  }

  /**
   * Lets go of the pending runs this store queued with affinity (a stopping replica): any
   * replica may claim them at once. Resolves how many there were.
   */
  async releaseQueued(): Promise<number> {
    const { rowCount } = await this.#sql.query(
      "UPDATE runs SET lease_holder = NULL, lease_until = NULL WHERE status = 'pending' AND lease_holder = $1",
      [this.holder],
    );
    return rowCount;
  }

  /**
   * Takes over one running run whose lease expired (its replica died or lost the database
   * for longer than the lease): leased here, its attempt counted, `resumed: true` and
   * `resumed_at` merged into its metadata. Null when there is none.
   */
  async takeOver(): Promise<TakenRun | null> {
    const { rows } = await this.#sql.query<
      RunRow & { assistant: ClaimedRun["assistant"]; previous_holder: string | null }
    >(
      `WITH old AS (
         SELECT run_id, lease_holder FROM runs WHERE status = 'running' AND lease_until < now() AND lease_holder IS DISTINCT FROM $2
           ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED
       ), c AS (
         UPDATE runs SET attempt = attempt + 1, lease_holder = $2, lease_until = now() + make_interval(secs => $1::float8),
           metadata = metadata || jsonb_build_object('resumed', true, 'resumed_at', now())
         FROM old WHERE runs.run_id = old.run_id AND runs.status = 'running' RETURNING runs.*, old.lease_holder AS previous_holder
       )
       SELECT c.*, (SELECT json_build_object('graph_id', a.graph_id, 'config', a.config, 'context', a.context) FROM assistants a WHERE a.assistant_id = c.assistant_id) AS assistant FROM c`,
      [this.leaseSeconds, this.holder],
    );
    const r = rows[0];
    return r ? { ...this.#toRun(r), assistant: r.assistant ?? null, previous_holder: r.previous_holder ?? null } : null;
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
    return rows.map((r) => this.#toRun(r));
  }
}
