/**
 * The SQL of release safety (issue 37): a revision's gates and canary share, a running canary
 * on its deployment, and its end (promoted: DEPLOYED and active, the previous superseded;
 * aborted: INTERRUPTED with the reason), which forgets the threads it took (./release-threads.ts).
 */
import type { SqlDriver, SqlExecutor } from "../../storage/index.ts";
import type { RevisionRelease } from "../api/resources.ts";
import { appendLog, markDeployed, setRevisionStatus } from "./revisions.ts";
import { clearCanaryThreads } from "./release-threads.ts";

const json = (v: unknown) => JSON.stringify(v ?? null);

/** Stores what a new revision must pass and its canary share. */
export async function setRevisionRelease(db: SqlExecutor, revisionId: string, release: RevisionRelease): Promise<void> {
  await db.query("UPDATE platform_revisions SET release = $2::jsonb WHERE id = $1", [revisionId, json(release)]);
}

/** Marks a new revision as a rollback to `of` (it serves that revision's build). */
export async function setRollbackOf(db: SqlExecutor, revisionId: string, of: string): Promise<void> {
  await db.query("UPDATE platform_revisions SET rollback_of = $2 WHERE id = $1", [revisionId, of]);
}

/**
 * The canary runs: the deployment names it and its share; the revision stays DEPLOYING with a
 * message saying so. False when the revision had meanwhile left DEPLOYING.
 */
export async function startCanary(
  db: SqlDriver,
  c: { deploymentId: string; revisionId: string; percent: number; url: string | null },
): Promise<boolean> {
  return await db.transaction(async (tx) => {
    const moved = await setRevisionStatus(tx, c.revisionId, {
      status: "DEPLOYING",
      from: ["DEPLOYING"],
      message: `canary: ${c.percent}% of new threads; promote or abort it`,
    });
    if (!moved) return false;
    await tx.query(
      "UPDATE platform_deployments SET canary_revision_id = $2, canary_percent = $3, url = COALESCE($4, url), updated_at = now() WHERE id = $1",
      [c.deploymentId, c.revisionId, c.percent, c.url],
    );
    await appendLog(tx, {
      revisionId: c.revisionId,
      kind: "deploy",
      message:
        `canary: revision ${c.revisionId} takes ${c.percent}% of new threads; the previous revision serves the rest`,
    });
    return true;
  });
}

/** The canary took all traffic: DEPLOYED and active (the previous revision superseded), no canary. */
export async function promoteCanary(
  db: SqlDriver,
  c: { deploymentId: string; revisionId: string; url: string | null },
): Promise<boolean> {
  const done = await markDeployed(db, {
    deploymentId: c.deploymentId,
    revisionId: c.revisionId,
    from: "DEPLOYING",
    url: c.url,
  });
  await clearCanary(db, c.deploymentId);
  return done;
}

/** The canary stopped (`reason`): INTERRUPTED, and the deployment has no canary. */
export async function endCanary(
  db: SqlDriver,
  c: { deploymentId: string; revisionId: string; reason: string },
): Promise<void> {
  await db.transaction(async (tx) => {
    await setRevisionStatus(tx, c.revisionId, { status: "INTERRUPTED", from: ["DEPLOYING"], message: c.reason });
    await appendLog(tx, { revisionId: c.revisionId, kind: "deploy", message: `INTERRUPTED: ${c.reason}` });
    await clearCanary(tx, c.deploymentId);
  });
}

/** The deployment runs no canary; the threads it took are forgotten (they go on on the serving revision). */
async function clearCanary(db: SqlExecutor, deploymentId: string): Promise<void> {
  await clearCanaryThreads(db, deploymentId);
  await db.query(
    "UPDATE platform_deployments SET canary_revision_id = NULL, canary_percent = NULL, updated_at = now() WHERE id = $1",
    [deploymentId],
  );
}
