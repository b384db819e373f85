/**
 * Runs: the durable queue. A run is inserted `pending`, claimed by one worker (`running`,
 * with a lease the worker renews), and finished with a final status. At most one run per
 * thread is `running` (a unique partial index enforces it across replicas), and a thread's
 * pending runs are claimed in order.
 */
import type { AtRestEncryption } from "./encryption.ts";
import { replicaId } from "./lease.ts";
import { type Json, ownerClause, type Run, type RunStatus, type Scope } from "./records.ts";
import { type CreatedOnThread, createOnThread, type CreateOnThreadOptions } from "./runs/create.ts";
import { completeRun, type RunEnd, setRunStatus, type StatusChange } from "./runs/end.ts";
import { type ClaimOptions, claimRun, takeOverRun } from "./runs/queue.ts";
import { beatRevision, leaveRevision } from "./runs/revisions.ts";
import {
  type ClaimedRun,
  type RunInput,
  runParams,
  type RunRow,
  type RunsContext,
  storedPatch,
  type TakenRun,
  toRun,
} from "./runs/rows.ts";
import type { SqlDriver, SqlExecutor } from "./sql.ts";
import { jsonbText } from "./jsonb.ts";

export type { ClaimedRun, RunInput, TakenRun };

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

/** Run records and the queue operations. */
export class RunStore {
  readonly #sql: SqlDriver;
  /** Who holds the leases of the runs this store claims (one per store: several servers may share a process). */
  readonly holder: string;
  /** Seconds a claimed run's lease lasts before it must be renewed. */
  leaseSeconds = DEFAULT_RUN_LEASE_SECONDS;
  readonly #enc: AtRestEncryption | null;

  /** The revision of the server this store belongs to, recorded on the runs it creates (null: none; ./runs/revisions.ts). */
  readonly revision: string | null;

  constructor(sql: SqlDriver, opts: { encryption?: AtRestEncryption | null; revision?: string | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
    this.revision = opts.revision || null;
    this.holder = `${replicaId()}:${++stores}`;
  }

  /** What the statements of runs/ need of this store, as it is now. */
  #ctx(): RunsContext {
    return {
      sql: this.#sql,
      enc: this.#enc,
      holder: this.holder,
      leaseSeconds: this.leaseSeconds,
      revision: this.revision,
    };
  }

  /**
   * Marks this store's worker alive for its revision (for a lease's length; renew it every
   * third of that), or, with `stopped`, gone: its revision's runs then fall to the other
   * revisions once no worker of it is left. Nothing without a revision (./runs/revisions.ts).
   */
  beat(stopped = false): Promise<void> {
    return stopped ? leaveRevision(this.#ctx()) : beatRevision(this.#ctx());
  }

  #toRun(r: RunRow): Run {
    return toRun(r, this.#enc);
  }

  /**
   * Inserts a pending run. With `threadPatch`, the same statement marks its thread `busy`
   * and merges the patch into the thread's metadata.
   */
  async insert(r: RunInput, tx: SqlExecutor = this.#sql, threadPatch?: Json): Promise<Run> {
    const params = runParams(r, this.#enc);
    const busy = threadPatch
      ? `WITH busy AS (UPDATE threads SET status = 'busy', metadata = metadata || $${
        params.push(storedPatch(threadPatch, this.#enc))
      }::jsonb, updated_at = now() WHERE thread_id = $2) `
      : "";
    const { rows } = await tx.query<RunRow>(
      `${busy}INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, not_before, revision)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, CASE WHEN $7::float8 > 0 THEN now() + make_interval(secs => $7::float8) END, $${
        params.push(this.revision)
      }::text) RETURNING *`,
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
  createOnThread(r: RunInput, opts: CreateOnThreadOptions): Promise<CreatedOnThread> {
    return createOnThread(this.#ctx(), r, opts);
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
      [runId, jsonbText(outcome)],
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
    await tx.query("DELETE FROM run_event_batches WHERE run_id = $1", [runId]);
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
  claim(runId?: string, opts: ClaimOptions = {}): Promise<ClaimedRun | null> {
    return claimRun(this.#ctx(), runId, opts);
  }

  /**
   * Records the end of a run in one statement: its last stream events, the thread's state
   * (`busy` while other runs of the thread are in flight) and the run's final status (only
   * from `running`). Resolves whether other runs of the thread are in flight, and `lost`:
   * another replica took the run over (its lease had expired), so nothing was written.
   * `checkpoints` (SqlCheckpointSaver.flushWith's builder) adds the checkpointer's pending
   * writes to the statement; they are written even when the run was lost, as a flush would.
   */
  complete(ending: RunEnd): Promise<{ busy: boolean; lost: boolean }> {
    return completeRun(this.#ctx(), ending);
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
  setStatus(runId: string, status: RunStatus, opts: Omit<StatusChange, "status"> = {}): Promise<Run | null> {
    return setRunStatus(this.#ctx(), runId, { ...opts, status });
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
  takeOver(): Promise<TakenRun | null> {
    return takeOverRun(this.#ctx());
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
