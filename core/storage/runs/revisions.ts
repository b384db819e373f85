/**
 * Revision affinity of the queue: a run records the revision of the server that created it
 * (`runs.revision`; null under `dev` and on servers that have none), and each worker of a
 * revision keeps a row in `revision_workers` alive while it runs (renewed with its runs'
 * leases, deleted when it stops). A worker claims runs of its own revision or of none, and
 * another revision's only when that revision has no live worker left (it stopped, was
 * aborted or superseded), so a conversation's runs execute on the revision it is on and
 * none is stuck once its revision is gone.
 */
import type { RunsContext } from "./rows.ts";

/**
 * The condition that a worker of `$<param>` (its revision, or null) may execute the run
 * aliased `r`: the run has no revision, has this one, or its revision has no live worker
 * (looked up by `revision_workers`' primary key).
 */
export function revisionClause(param: number): string {
  return `(r.revision IS NULL OR r.revision = $${param}::text OR NOT EXISTS (
    SELECT 1 FROM revision_workers w WHERE w.revision = r.revision AND w.until > now()))`;
}

/**
 * Marks this store's worker of its revision alive for `leaseSeconds` (renewed every third of
 * that with the runs' leases); rows of workers that stopped long ago go in the same statement.
 * Nothing without a revision.
 */
export async function beatRevision(ctx: RunsContext): Promise<void> {
  if (!ctx.revision) return;
  await ctx.sql.query(
    `WITH gone AS (DELETE FROM revision_workers WHERE until < now() - interval '1 hour')
     INSERT INTO revision_workers (revision, holder, until) VALUES ($1, $2, now() + make_interval(secs => $3::float8))
     ON CONFLICT (revision, holder) DO UPDATE SET until = EXCLUDED.until`,
    [ctx.revision, ctx.holder, ctx.leaseSeconds],
  );
}

/** This store's worker stopped: its revision's runs fall to the other revisions at once when it was the last. */
export async function leaveRevision(ctx: RunsContext): Promise<void> {
  if (!ctx.revision) return;
  await ctx.sql.query("DELETE FROM revision_workers WHERE revision = $1 AND holder = $2", [ctx.revision, ctx.holder]);
}
