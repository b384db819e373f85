/**
 * The threads of a Kubernetes canary, kept in the deployment's own PostgreSQL (the database its
 * revisions share) by `agentcli router`: every router replica reads and writes the same table,
 * and a router that starts again finds the threads placed before, and the share so far. The
 * table is `agentcli_canary_threads`, beside the Agent API's tables; its rows of a canary are
 * deleted when a router for another canary revision starts (a canary at a time per deployment).
 */
import type { CanaryThreads } from "../../kernel/index.ts";
import type { SqlExecutor } from "../../storage/index.ts";

const TABLE = `CREATE TABLE IF NOT EXISTS agentcli_canary_threads (
  deployment_id text NOT NULL,
  thread_id text NOT NULL,
  revision_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (deployment_id, thread_id)
)`;

/** Creates the table when missing and forgets the threads of earlier canaries (other revisions) of the deployment. */
export async function prepareCanaryThreads(
  db: SqlExecutor,
  o: { deploymentId: string; revisionId: string },
): Promise<void> {
  await db.query(TABLE);
  await db.query("DELETE FROM agentcli_canary_threads WHERE deployment_id = $1 AND revision_id <> $2", [
    o.deploymentId,
    o.revisionId,
  ]);
}

/** {@link CanaryThreads} on the table (see the file comment). */
export function pgCanaryThreads(db: SqlExecutor): CanaryThreads {
  return {
    assign: async (a) => {
      await db.query(
        `INSERT INTO agentcli_canary_threads (deployment_id, thread_id, revision_id) VALUES ($1, $2, $3)
         ON CONFLICT (deployment_id, thread_id) DO NOTHING`,
        [a.deploymentId, a.threadId, a.revisionId],
      );
    },
    revisionOf: async (q) => {
      const { rows } = await db.query<{ revision_id: string }>(
        "SELECT revision_id FROM agentcli_canary_threads WHERE deployment_id = $1 AND thread_id = $2",
        [q.deploymentId, q.threadId],
      );
      return rows[0]?.revision_id ?? null;
    },
    count: async (deploymentId) => {
      const { rows } = await db.query<{ n: string | number }>(
        "SELECT count(*) AS n FROM agentcli_canary_threads WHERE deployment_id = $1",
        [deploymentId],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
