/**
 * The threads a running canary took (issue 37): written by the deployment's router (the local
 * proxy) before the thread's creator hears of it, read when a request names a thread the
 * router has not seen (after a control-plane restart, on another replica), deleted when the
 * canary ends (./release.ts).
 */
import type { SqlExecutor } from "../../storage/index.ts";

/** Records that `threadId` of the deployment runs on the canary `revisionId` (again: no change). */
export async function assignCanaryThread(
  db: SqlExecutor,
  a: { deploymentId: string; revisionId: string; threadId: string },
): Promise<void> {
  await db.query(
    `INSERT INTO platform_canary_threads (deployment_id, thread_id, revision_id) VALUES ($1, $2, $3)
     ON CONFLICT (deployment_id, thread_id) DO NOTHING`,
    [a.deploymentId, a.threadId, a.revisionId],
  );
}

/** The canary revision a thread of the deployment was placed on, or null (it runs on the serving revision). */
export async function canaryRevisionOfThread(
  db: SqlExecutor,
  q: { deploymentId: string; threadId: string },
): Promise<string | null> {
  const { rows } = await db.query<{ revision_id: string }>(
    "SELECT revision_id FROM platform_canary_threads WHERE deployment_id = $1 AND thread_id = $2",
    [q.deploymentId, q.threadId],
  );
  return rows[0]?.revision_id ?? null;
}

/** How many threads the deployment's canary took (its share survives a restart). */
export async function countCanaryThreads(db: SqlExecutor, deploymentId: string): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(
    "SELECT count(*) AS n FROM platform_canary_threads WHERE deployment_id = $1",
    [deploymentId],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Forgets the deployment's canary threads (the canary ended). */
export async function clearCanaryThreads(db: SqlExecutor, deploymentId: string): Promise<void> {
  await db.query("DELETE FROM platform_canary_threads WHERE deployment_id = $1", [deploymentId]);
}
