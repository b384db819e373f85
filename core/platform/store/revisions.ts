/**
 * SQL access to revisions and their log lines. A revision is read through its deployment (or a
 * row already read for its tenant), so one tenant never reaches another's.
 */
import type { SqlDriver, SqlExecutor } from "../../storage/index.ts";
import type { RevisionRow } from "../api/resources.ts";
import type { RevisionStatus, Source, SourceRevisionConfig } from "../api/schema.ts";
import { isUuid, updateDeployment } from "./deployments.ts";

const json = (v: unknown) => JSON.stringify(v ?? null);

export async function insertRevision(db: SqlExecutor, row: {
  id: string;
  deploymentId: string;
  tenantId: string;
  source: Source;
  sourceRevisionConfig: SourceRevisionConfig;
  secrets: Array<{ name: string; value: string }>;
  remoteReconciled: boolean;
  status?: RevisionStatus;
  /** An earlier revision's build, reused (a rollback). */
  artifactPath?: string | null;
}): Promise<void> {
  await db.query(
    `INSERT INTO platform_revisions (id, deployment_id, tenant_id, status, source, source_revision_config, secrets, remote_reconciled, artifact_path)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9)`,
    [
      row.id,
      row.deploymentId,
      row.tenantId,
      row.status ?? "CREATING",
      row.source,
      json(row.sourceRevisionConfig),
      json(row.secrets),
      row.remoteReconciled,
      row.artifactPath ?? null,
    ],
  );
}

/** Inserts a revision and makes it its deployment's latest (give a transaction's executor: both or neither). */
export async function insertLatestRevision(db: SqlExecutor, row: Parameters<typeof insertRevision>[1]): Promise<void> {
  await insertRevision(db, row);
  await updateDeployment(db, row.deploymentId, { latest_revision_id: row.id });
}

export async function getRevision(db: SqlExecutor, deploymentId: string, id: string): Promise<RevisionRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<RevisionRow>(
    "SELECT * FROM platform_revisions WHERE deployment_id = $1 AND id = $2",
    [deploymentId, id],
  );
  return rows[0] ?? null;
}

export async function listRevisions(
  db: SqlExecutor,
  deploymentId: string,
  f: { limit: number; offset: number; status?: string[]; remoteReconciled?: boolean },
): Promise<RevisionRow[]> {
  const where = ["deployment_id = $1"];
  const params: unknown[] = [deploymentId];
  if (f.status?.length) {
    params.push(f.status);
    where.push(`status = ANY($${params.length}::text[])`);
  }
  if (f.remoteReconciled !== undefined) {
    params.push(f.remoteReconciled);
    where.push(`remote_reconciled = $${params.length}`);
  }
  params.push(f.limit, f.offset);
  const { rows } = await db.query<RevisionRow>(
    `SELECT * FROM platform_revisions WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT $${
      params.length - 1
    } OFFSET $${params.length}`,
    params,
  );
  return rows;
}

/** A revision's move: to `status`, only from one of `from` (when given), with what changes along. */
export interface RevisionMove {
  status: RevisionStatus;
  from?: RevisionStatus[];
  message?: string | null;
  artifactPath?: string;
  sourceRevisionConfig?: SourceRevisionConfig;
}

/** Moves a revision (see {@link RevisionMove}); true when it moved. */
export async function setRevisionStatus(db: SqlExecutor, id: string, move: RevisionMove): Promise<boolean> {
  const params: unknown[] = [id, move.status];
  const sets = ["status = $2", "updated_at = now()"];
  if (move.status === "DEPLOYED") sets.push("deployed_at = now()");
  if (move.message !== undefined) {
    params.push(move.message);
    sets.push(`status_message = $${params.length}`);
  }
  if (move.artifactPath !== undefined) {
    params.push(move.artifactPath);
    sets.push(`artifact_path = $${params.length}`);
  }
  if (move.sourceRevisionConfig !== undefined) {
    params.push(json(move.sourceRevisionConfig));
    sets.push(`source_revision_config = $${params.length}::jsonb`);
  }
  let guard = "";
  if (move.from) {
    params.push(move.from);
    guard = ` AND status = ANY($${params.length}::text[])`;
  }
  const r = await db.query(`UPDATE platform_revisions SET ${sets.join(", ")} WHERE id = $1${guard}`, params);
  return r.rowCount > 0;
}

/**
 * Marks the deployment's other DEPLOYED revisions INTERRUPTED, superseded by `by` (which now
 * serves); each gets a log line. They keep `deployed_at`, so rollback can still return to them.
 */
export async function supersedeRevisions(db: SqlExecutor, deploymentId: string, by: string): Promise<void> {
  const message = `superseded by revision ${by}`;
  const { rows } = await db.query<{ id: string }>(
    "UPDATE platform_revisions SET status = 'INTERRUPTED', status_message = $3, updated_at = now() WHERE deployment_id = $1 AND status = 'DEPLOYED' AND id <> $2 RETURNING id",
    [deploymentId, by, message],
  );
  for (const r of rows) {
    await appendLog(db, { revisionId: r.id, kind: "deploy", message: `INTERRUPTED: ${message}, which now serves` });
  }
}

export async function revisionsInStatus(db: SqlExecutor, statuses: RevisionStatus[]): Promise<RevisionRow[]> {
  const { rows } = await db.query<RevisionRow>(
    "SELECT * FROM platform_revisions WHERE status = ANY($1::text[]) ORDER BY seq",
    [statuses],
  );
  return rows;
}

/** The revisions of a deployment in one of `statuses`, newest first. */
export async function revisionsOf(
  db: SqlExecutor,
  deploymentId: string,
  statuses: RevisionStatus[],
): Promise<RevisionRow[]> {
  const { rows } = await db.query<RevisionRow>(
    "SELECT * FROM platform_revisions WHERE deployment_id = $1 AND status = ANY($2::text[]) ORDER BY seq DESC",
    [deploymentId, statuses],
  );
  return rows;
}

/**
 * The end of a rollout, in one transaction: the revision DEPLOYED (only from `from`), the
 * deployment READY and serving it at `url`, its other DEPLOYED revisions superseded, and the
 * last log line. False, with nothing written, when the revision had meanwhile left `from`.
 */
export async function markDeployed(
  db: SqlDriver,
  m: { deploymentId: string; revisionId: string; from: RevisionStatus; url: string | null },
): Promise<boolean> {
  try {
    await db.transaction(async (tx) => {
      if (!(await setRevisionStatus(tx, m.revisionId, { status: "DEPLOYED", from: [m.from] }))) throw new NotMoved();
      await updateDeployment(tx, m.deploymentId, {
        active_revision_id: m.revisionId,
        url: m.url,
        status: "READY",
        status_message: null,
      });
      await supersedeRevisions(tx, m.deploymentId, m.revisionId);
      await appendLog(tx, {
        revisionId: m.revisionId,
        kind: "deploy",
        message: `revision ${m.revisionId} is live${m.url ? ` at ${m.url}` : ""}`,
      });
    });
    return true;
  } catch (err) {
    if (err instanceof NotMoved) return false;
    throw err;
  }
}

/** Rolls markDeployed's transaction back. */
class NotMoved extends Error {}

/** One line of a revision's build or deploy log. */
export async function appendLog(
  db: SqlExecutor,
  line: { revisionId: string; kind: "build" | "deploy"; message: string },
): Promise<void> {
  await db.query("INSERT INTO platform_revision_logs (revision_id, kind, message) VALUES ($1, $2, $3)", [
    line.revisionId,
    line.kind,
    line.message,
  ]);
}

export interface LogLine {
  id: number;
  kind: string;
  message: string;
  at: string;
}

export async function readLogs(
  db: SqlExecutor,
  revisionId: string,
  opts: { after: number; kind?: string; limit?: number },
): Promise<LogLine[]> {
  const params: unknown[] = [revisionId, opts.after, opts.limit ?? 1000];
  let kind = "";
  if (opts.kind) {
    params.push(opts.kind);
    kind = ` AND kind = $4`;
  }
  const { rows } = await db.query<{ id: string | number; kind: string; message: string; at: Date }>(
    `SELECT id, kind, message, at FROM platform_revision_logs WHERE revision_id = $1 AND id > $2${kind} ORDER BY id LIMIT $3`,
    params,
  );
  return rows.map((r) => ({ id: Number(r.id), kind: r.kind, message: r.message, at: new Date(r.at).toISOString() }));
}
