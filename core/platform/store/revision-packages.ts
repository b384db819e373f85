/**
 * Which folder of installed npm packages (`<data-dir>/packages/<key>`, ../reconciler/packages.ts)
 * each revision uses, and which revisions keep theirs: the sweep of old installs
 * (../reconciler/packages-sweep.ts) removes only folders none of these names.
 */
import type { SqlDriver, SqlExecutor } from "../../storage/index.ts";

/** A revision whose install is kept: its key ('' none, null not recorded yet) and its build. */
export interface KeptPackages {
  id: string;
  packagesKey: string | null;
  artifactPath: string | null;
  /** Still being rolled out: it records its key itself, before it installs. */
  inFlight: boolean;
}

/** Records the packages folder a revision's build uses (`""`: it installs none). */
export async function recordPackages(db: SqlExecutor, o: { revisionId: string; key: string }): Promise<void> {
  await db.query("UPDATE platform_revisions SET packages_key = $2 WHERE id = $1", [o.revisionId, o.key]);
}

/**
 * Runs `fn` in one transaction holding the packages lock: a build records its key and checks
 * its folder under it, and the sweep re-reads the kept keys and moves folders aside under it,
 * so no folder a revision just named is removed. On PostgreSQL it is an advisory lock, held
 * across replicas; the embedded database runs one transaction at a time.
 */
export async function withPackagesLock<T>(db: SqlDriver, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  return await db.transaction(async (tx) => {
    if (db.kind === "postgres") await tx.query("SELECT pg_advisory_xact_lock(hashtext('agentcli:platform-packages'))");
    return await fn(tx);
  });
}

/** The `claim` of a revision's install (../reconciler/packages.ts): its key recorded under the packages lock. */
export function packagesClaim(
  db: SqlDriver,
  revisionId: string,
): (key: string, use: () => Promise<boolean>) => Promise<boolean> {
  return (key, use) =>
    withPackagesLock(db, async (tx) => {
      await recordPackages(tx, { revisionId, key });
      return await use();
    });
}

/**
 * The revisions the control plane may still run or roll back to: those being rolled out, each
 * deployment's serving revision and running canary, and its `servedKept` newest revisions that
 * served (a rollback to an older one installs its packages again).
 */
export async function revisionsKeepingPackages(db: SqlExecutor, servedKept: number): Promise<KeptPackages[]> {
  const { rows } = await db.query<
    { id: string; packages_key: string | null; artifact_path: string | null; in_flight: boolean }
  >(
    `SELECT r.id, r.packages_key, r.artifact_path, r.in_flight FROM (
       SELECT id, deployment_id, packages_key, artifact_path, deployed_at,
         status IN ('CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING') AS in_flight,
         row_number() OVER (PARTITION BY deployment_id ORDER BY deployed_at DESC NULLS LAST) AS served_rank
       FROM platform_revisions
     ) r JOIN platform_deployments d ON d.id = r.deployment_id
     WHERE r.in_flight OR r.id = d.active_revision_id OR r.id = d.canary_revision_id
       OR (r.deployed_at IS NOT NULL AND r.served_rank <= $1)`,
    [servedKept],
  );
  return rows.map((r) => ({
    id: r.id,
    packagesKey: r.packages_key,
    artifactPath: r.artifact_path,
    inFlight: r.in_flight,
  }));
}
