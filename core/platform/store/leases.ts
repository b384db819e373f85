/**
 * Reconcile leases: which control-plane replica works on a deployment. Several `platform
 * serve` processes may share one PostgreSQL; a replica reconciles a deployment (builds, rolls
 * out, tears down) only while it holds that deployment's lease, a row it takes with one
 * atomic upsert when the row is absent, expired, or already its own, and renews while it
 * works. A replica that dies stops renewing; once its lease expires another takes over and
 * marks the rollout it left behind INTERRUPTED. The embedded database is single-process, so
 * there every lease is this process's.
 *
 * @example
 * if (await acquireLease(db, { deploymentId: id, holder: me, ttlMs: 15_000 })) try { ... } finally { await releaseLease(db, id, me); }
 */
import type { SqlExecutor } from "../../storage/index.ts";

/** A replica's hold on a deployment: who holds it and for how long without renewal. */
export interface LeaseTerms {
  deploymentId: string;
  holder: string;
  ttlMs: number;
}

/** Takes (or extends) the lease of a deployment; false when another live replica holds it. */
export async function acquireLease(db: SqlExecutor, lease: LeaseTerms): Promise<boolean> {
  const { deploymentId, holder, ttlMs } = lease;
  const { rows } = await db.query<{ holder: string }>(
    `INSERT INTO platform_reconcile_leases (deployment_id, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
     ON CONFLICT (deployment_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE platform_reconcile_leases.holder = EXCLUDED.holder OR platform_reconcile_leases.expires_at < now()
     RETURNING holder`,
    [deploymentId, holder, ttlMs],
  );
  return rows[0]?.holder === holder;
}

/**
 * Extends a held lease. Answers null when the lease is no longer this holder's (it expired and
 * another replica took it), otherwise the deployment's status (null-safe: "GONE" when deleted).
 */
export async function renewLease(db: SqlExecutor, lease: LeaseTerms): Promise<string | null> {
  const { deploymentId, holder, ttlMs } = lease;
  const { rows } = await db.query<{ status: string | null }>(
    `UPDATE platform_reconcile_leases SET expires_at = now() + $3 * interval '1 millisecond'
     WHERE deployment_id = $1 AND holder = $2
     RETURNING (SELECT status FROM platform_deployments WHERE id = $1) AS status`,
    [deploymentId, holder, ttlMs],
  );
  return rows.length ? rows[0]!.status ?? "GONE" : null;
}

export async function releaseLease(db: SqlExecutor, deploymentId: string, holder: string): Promise<void> {
  await db.query("DELETE FROM platform_reconcile_leases WHERE deployment_id = $1 AND holder = $2", [
    deploymentId,
    holder,
  ]);
}

/** Single-process mode (embedded database): leases left by an earlier run of this process are void. */
export async function clearLeases(db: SqlExecutor): Promise<void> {
  await db.query("DELETE FROM platform_reconcile_leases");
}

/** Deployments with work to do whose lease is free (absent, expired, or `holder`'s). */
export async function deploymentsNeedingWork(
  db: SqlExecutor,
  holder: string,
  statuses: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT d.id FROM platform_deployments d
     WHERE (d.status IN ('AWAITING_DATABASE', 'AWAITING_DELETE')
            OR EXISTS (SELECT 1 FROM platform_revisions r WHERE r.deployment_id = d.id AND r.status = ANY($1::text[])))
       AND NOT EXISTS (SELECT 1 FROM platform_reconcile_leases l WHERE l.deployment_id = d.id AND l.expires_at >= now() AND l.holder <> $2)`,
    [statuses, holder],
  );
  return rows.map((r) => r.id);
}
