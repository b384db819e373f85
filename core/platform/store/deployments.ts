/**
 * SQL access to deployments, revisions, their logs and uploaded objects. Every function takes
 * the tenant (or a row already read for it), so one tenant never reaches another's rows.
 */
import type { SqlExecutor } from "../../storage/index.ts";
import type { DeploymentRow, RevisionRow } from "../api/resources.ts";
import type { DeploymentStatus, RevisionStatus, Source, SourceConfig, SourceRevisionConfig } from "../api/schema.ts";

const json = (v: unknown) => JSON.stringify(v ?? null);

export async function getDeployment(db: SqlExecutor, tenantId: string, id: string): Promise<DeploymentRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<DeploymentRow>(
    "SELECT * FROM platform_deployments WHERE tenant_id = $1 AND id = $2",
    [tenantId, id],
  );
  return rows[0] ?? null;
}

export async function getDeploymentById(db: SqlExecutor, id: string): Promise<DeploymentRow | null> {
  const { rows } = await db.query<DeploymentRow>("SELECT * FROM platform_deployments WHERE id = $1", [id]);
  return rows[0] ?? null;
}

export async function insertDeployment(db: SqlExecutor, row: {
  id: string;
  tenantId: string;
  name: string;
  source: Source;
  sourceConfig: SourceConfig;
  sourceRevisionConfig: SourceRevisionConfig;
  secrets: Array<{ name: string; value: string }>;
  secretReferences: unknown;
  imageVersion: string | null;
  remoteReconciled: boolean;
  tagValueIds: string[];
}): Promise<void> {
  await db.query(
    `INSERT INTO platform_deployments (id, tenant_id, name, source, source_config, source_revision_config, secrets, secret_references,
       status, image_version, remote_reconciled, tag_value_ids)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8::jsonb, 'AWAITING_DATABASE', $9, $10, $11::jsonb)`,
    [
      row.id,
      row.tenantId,
      row.name,
      row.source,
      json(row.sourceConfig),
      json(row.sourceRevisionConfig),
      json(row.secrets),
      row.secretReferences === null || row.secretReferences === undefined ? null : json(row.secretReferences),
      row.imageVersion,
      row.remoteReconciled,
      json(row.tagValueIds),
    ],
  );
}

/** Updates the given columns of a deployment (jsonb columns given as values). */
export async function updateDeployment(
  db: SqlExecutor,
  id: string,
  patch: Partial<{
    source_config: SourceConfig;
    source_revision_config: SourceRevisionConfig;
    secrets: unknown;
    secret_references: unknown;
    status: DeploymentStatus;
    latest_revision_id: string | null;
    active_revision_id: string | null;
    image_version: string | null;
    remote_reconciled: boolean;
    tag_value_ids: string[];
    url: string | null;
    status_message: string | null;
  }>,
): Promise<void> {
  const jsonCols = new Set([
    "source_config",
    "source_revision_config",
    "secrets",
    "secret_references",
    "tag_value_ids",
  ]);
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [col, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    params.push(jsonCols.has(col) ? (value === null ? null : json(value)) : value);
    const p = `$${params.length}${jsonCols.has(col) ? "::jsonb" : ""}`;
    // Teardown wins: a rollout finishing late must not revive a deployment being deleted.
    sets.push(
      col === "status" ? `status = CASE WHEN status = 'AWAITING_DELETE' THEN status ELSE ${p} END` : `${col} = ${p}`,
    );
  }
  if (!sets.length) return;
  await db.query(`UPDATE platform_deployments SET ${sets.join(", ")}, updated_at = now() WHERE id = $1`, params);
}

export async function deleteDeploymentRow(db: SqlExecutor, id: string): Promise<void> {
  await db.query("DELETE FROM platform_objects WHERE deployment_id = $1", [id]);
  await db.query("DELETE FROM platform_deployments WHERE id = $1", [id]);
}

export interface DeploymentFilters {
  limit: number;
  offset: number;
  nameContains?: string;
  status?: string[];
  remoteReconciled?: boolean;
  tagValueIds?: string[];
  imageVersion?: string;
  deploymentType?: string;
  deploymentIds?: string[];
}

export async function listDeployments(
  db: SqlExecutor,
  tenantId: string,
  f: DeploymentFilters,
): Promise<DeploymentRow[]> {
  const where = ["tenant_id = $1"];
  const params: unknown[] = [tenantId];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (f.nameContains) add((p) => `strpos(lower(name), lower(${p})) > 0`, f.nameContains);
  if (f.status?.length) add((p) => `status = ANY(${p}::text[])`, f.status);
  if (f.remoteReconciled !== undefined) add((p) => `remote_reconciled = ${p}`, f.remoteReconciled);
  if (f.tagValueIds?.length) {
    add(
      (p) => `EXISTS (SELECT 1 FROM jsonb_array_elements_text(tag_value_ids) t WHERE t = ANY(${p}::text[]))`,
      f.tagValueIds,
    );
  }
  if (f.imageVersion) add((p) => `image_version = ${p}`, f.imageVersion);
  if (f.deploymentType) add((p) => `source_config->>'deployment_type' = ${p}`, f.deploymentType);
  if (f.deploymentIds?.length) add((p) => `id::text = ANY(${p}::text[])`, f.deploymentIds);
  params.push(f.limit, f.offset);
  const { rows } = await db.query<DeploymentRow>(
    `SELECT * FROM platform_deployments WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id LIMIT $${
      params.length - 1
    } OFFSET $${params.length}`,
    params,
  );
  return rows;
}

export async function insertRevision(db: SqlExecutor, row: {
  id: string;
  deploymentId: string;
  tenantId: string;
  source: Source;
  sourceRevisionConfig: SourceRevisionConfig;
  secrets: Array<{ name: string; value: string }>;
  remoteReconciled: boolean;
  status?: RevisionStatus;
}): Promise<void> {
  await db.query(
    `INSERT INTO platform_revisions (id, deployment_id, tenant_id, status, source, source_revision_config, secrets, remote_reconciled)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8)`,
    [
      row.id,
      row.deploymentId,
      row.tenantId,
      row.status ?? "CREATING",
      row.source,
      json(row.sourceRevisionConfig),
      json(row.secrets),
      row.remoteReconciled,
    ],
  );
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

/** Moves a revision to `status`, only from one of `from` (when given); true when it moved. */
export async function setRevisionStatus(
  db: SqlExecutor,
  id: string,
  status: RevisionStatus,
  opts: {
    from?: RevisionStatus[];
    message?: string | null;
    artifactPath?: string;
    sourceRevisionConfig?: SourceRevisionConfig;
  } = {},
): Promise<boolean> {
  const params: unknown[] = [id, status];
  const sets = ["status = $2", "updated_at = now()"];
  if (status === "DEPLOYED") sets.push("deployed_at = now()");
  if (opts.message !== undefined) {
    params.push(opts.message);
    sets.push(`status_message = $${params.length}`);
  }
  if (opts.artifactPath !== undefined) {
    params.push(opts.artifactPath);
    sets.push(`artifact_path = $${params.length}`);
  }
  if (opts.sourceRevisionConfig !== undefined) {
    params.push(json(opts.sourceRevisionConfig));
    sets.push(`source_revision_config = $${params.length}::jsonb`);
  }
  let guard = "";
  if (opts.from) {
    params.push(opts.from);
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
  for (const r of rows) await appendLog(db, r.id, "deploy", `INTERRUPTED: ${message}, which now serves`);
}

export async function revisionsInStatus(db: SqlExecutor, statuses: RevisionStatus[]): Promise<RevisionRow[]> {
  const { rows } = await db.query<RevisionRow>(
    "SELECT * FROM platform_revisions WHERE status = ANY($1::text[]) ORDER BY seq",
    [statuses],
  );
  return rows;
}

export async function appendLog(
  db: SqlExecutor,
  revisionId: string,
  kind: "build" | "deploy",
  message: string,
): Promise<void> {
  await db.query("INSERT INTO platform_revision_logs (revision_id, kind, message) VALUES ($1, $2, $3)", [
    revisionId,
    kind,
    message,
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

/** Stores a build artifact; like an upload, an object that already holds bytes is never overwritten. */
export async function putObject(
  db: SqlExecutor,
  o: { objectPath: string; tenantId: string; deploymentId: string; bytes: Uint8Array },
): Promise<void> {
  await db.query(
    `INSERT INTO platform_objects (object_path, tenant_id, deployment_id, bytes, size) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (object_path) DO UPDATE SET bytes = EXCLUDED.bytes, size = EXCLUDED.size WHERE platform_objects.bytes IS NULL`,
    [o.objectPath, o.tenantId, o.deploymentId, o.bytes, o.bytes.byteLength],
  );
}

/**
 * Fills an upload slot with its bytes, once: only a slot that has none yet is written, so a
 * second PUT to the same signed URL (a replay, or two racing) cannot replace what a revision
 * may already have been built from. Returns false when the slot already held bytes.
 */
export async function fillUpload(db: SqlExecutor, objectPath: string, bytes: Uint8Array): Promise<boolean> {
  const r = await db.query(
    "UPDATE platform_objects SET bytes = $2, size = $3 WHERE object_path = $1 AND bytes IS NULL",
    [objectPath, bytes, bytes.byteLength],
  );
  return r.rowCount > 0;
}

/** Registers an upload slot (no bytes yet). */
export async function reserveObject(
  db: SqlExecutor,
  o: { objectPath: string; tenantId: string; deploymentId: string },
): Promise<void> {
  await db.query("INSERT INTO platform_objects (object_path, tenant_id, deployment_id) VALUES ($1, $2, $3)", [
    o.objectPath,
    o.tenantId,
    o.deploymentId,
  ]);
}

export async function getObject(
  db: SqlExecutor,
  objectPath: string,
): Promise<{ tenant_id: string; deployment_id: string; bytes: Uint8Array | null } | null> {
  const { rows } = await db.query<{ tenant_id: string; deployment_id: string; bytes: Uint8Array | null }>(
    "SELECT tenant_id, deployment_id, bytes FROM platform_objects WHERE object_path = $1",
    [objectPath],
  );
  return rows[0] ?? null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(s: string): boolean {
  return UUID.test(s);
}
