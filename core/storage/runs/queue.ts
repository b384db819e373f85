/**
 * Taking runs from the queue: claiming the next runnable pending run (fairly between owners,
 * with a replica's affinity), and taking over a running run whose replica stopped renewing
 * its lease. Each logs the run's first stream event in the same statement.
 */
import type { Json } from "../records.ts";
import { revisionClause } from "./revisions.ts";
import { type ClaimedRun, type RunRow, type RunsContext, type TakenRun, toRun } from "./rows.ts";

/** Who is served first: see {@link claimRun}. */
export interface ClaimOptions {
  maxRunningPerOwner?: number;
  recentOwners?: string[];
}

/**
 * Claims the next runnable pending run (or exactly `runId` when given and runnable): the
 * first pending run of a thread that has no running run, taken fairly between owners: the
 * owner with the fewest runs executing first, then the owner served longest ago (by
 * `recentOwners`, most recent first; owners not in it before all), then the oldest run;
 * owners at `maxRunningPerOwner` wait. A pending run a replica queued with affinity (see
 * {@link createOnThread}: `lease_holder` and `lease_until` of a pending run) is claimed
 * only by that replica until `lease_until`, by any replica after. A run of another revision
 * is claimed only when that revision has no live worker (./revisions.ts). Null when none.
 */
export async function claimRun(ctx: RunsContext, runId?: string, opts: ClaimOptions = {}): Promise<ClaimedRun | null> {
  const params: unknown[] = [ctx.leaseSeconds, ctx.holder, ctx.revision];
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
    const { rows } = await ctx.sql.query<
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
             AND ${revisionClause(3)}
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
      ...toRun(run as RunRow, ctx.enc),
      assistant: row.assistant ?? null,
      ...(threadMetadata ? { threadMetadata: ctx.enc ? ctx.enc.openKeys(threadMetadata) : threadMetadata } : {}),
      ...(threadEmpty ? { threadEmpty: true } : {}),
    };
  } catch (err) {
    if ((err as { code?: string }).code === "23505") return null;
    throw err;
  }
}

/**
 * Takes over one running run whose lease expired (its replica died or lost the database
 * for longer than the lease): leased here, its attempt counted, `resumed: true` and
 * `resumed_at` merged into its metadata; another revision's run only when that revision has
 * no live worker (./revisions.ts). Null when there is none.
 */
export async function takeOverRun(ctx: RunsContext): Promise<TakenRun | null> {
  const { rows } = await ctx.sql.query<
    RunRow & { assistant: ClaimedRun["assistant"]; previous_holder: string | null }
  >(
    `WITH old AS (
       SELECT r.run_id, r.lease_holder FROM runs r WHERE r.status = 'running' AND r.lease_until < now() AND r.lease_holder IS DISTINCT FROM $2
         AND ${revisionClause(3)} ORDER BY r.lease_until LIMIT 1 FOR UPDATE OF r SKIP LOCKED
     ), c AS (
       UPDATE runs SET attempt = attempt + 1, lease_holder = $2, lease_until = now() + make_interval(secs => $1::float8),
         metadata = metadata || jsonb_build_object('resumed', true, 'resumed_at', now())
       FROM old WHERE runs.run_id = old.run_id AND runs.status = 'running' RETURNING runs.*, old.lease_holder AS previous_holder
     )
     SELECT c.*, (SELECT json_build_object('graph_id', a.graph_id, 'config', a.config, 'context', a.context) FROM assistants a WHERE a.assistant_id = c.assistant_id) AS assistant FROM c`,
    [ctx.leaseSeconds, ctx.holder, ctx.revision],
  );
  const r = rows[0];
  return r
    ? { ...toRun(r, ctx.enc), assistant: r.assistant ?? null, previous_holder: r.previous_holder ?? null }
    : null;
}
