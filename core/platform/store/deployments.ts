/**
 * SQL access to deployments (their revisions: ./revisions.ts; uploaded and built objects:
 * ./objects.ts). Every function takes the tenant (or a row already read for it), so one tenant
 * never reaches another's rows.
 */
import type { SqlExecutor } from "../../storage/index.ts";
import type { DeploymentRow } from "../api/resources.ts";
import type { DeploymentStatus, Source, SourceConfig, SourceRevisionConfig } from "../api/schema.ts";

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

/** Whether the tenant has a deployment of that name. */
export async function deploymentNameTaken(db: SqlExecutor, tenantId: string, name: string): Promise<boolean> {
  const dup = await db.query("SELECT id FROM platform_deployments WHERE tenant_id = $1 AND name = $2", [
    tenantId,
    name,
  ]);
  return dup.rows.length > 0;
}

/** Points the tenant's tracing project of that name at the deployment, creating it when absent (spec 2.9). */
export async function linkTracingProject(
  db: SqlExecutor,
  p: { id: string; tenantId: string; name: string; deploymentId: string },
): Promise<void> {
  await db.query(
    `INSERT INTO platform_tracing_projects (id, tenant_id, name, deployment_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (tenant_id, name) DO UPDATE SET deployment_id = EXCLUDED.deployment_id`,
    [p.id, p.tenantId, p.name, p.deploymentId],
  );
}

/** The deployments that serve a revision and are not being deleted (what a restart runs again). */
export async function servingDeployments(db: SqlExecutor): Promise<DeploymentRow[]> {
  const { rows } = await db.query<DeploymentRow>(
    "SELECT * FROM platform_deployments WHERE active_revision_id IS NOT NULL AND status <> 'AWAITING_DELETE'",
  );
  return rows;
}

/** The tenant's `repohost` deployments built from an integration (a push webhook's candidates), but those being deleted. */
export async function deploymentsOfIntegration(
  db: SqlExecutor,
  tenantId: string,
  integrationId: string,
): Promise<DeploymentRow[]> {
  const { rows } = await db.query<DeploymentRow>(
    "SELECT * FROM platform_deployments WHERE tenant_id = $1 AND source = 'repohost' AND source_config->>'integration_id' = $2 AND status <> 'AWAITING_DELETE'",
    [tenantId, integrationId],
  );
  return rows;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(s: string): boolean {
  return UUID.test(s);
}
