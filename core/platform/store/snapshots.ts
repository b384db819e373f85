/**
 * Rows of `platform_sandbox_snapshots`, per tenant: a snapshot's image and, when captured from a
 * sandbox, its files (a tar archive, read only when asked). The sandbox API's snapshots
 * (../sandboxes/snapshots.ts, ../routes/snapshots.ts) call these.
 */
import { randomUUID } from "node:crypto";
import type { SqlExecutor } from "../../storage/index.ts";
import { agentcliError, SnapshotNameTaken } from "../../kernel/index.ts";
import { notFound } from "../api/api-error.ts";
import { isUuid } from "./deployments.ts";

export interface SnapshotRow {
  id: string;
  tenant_id: string;
  name: string;
  docker_image: string;
  fs_capacity_bytes: string | number | null;
  source_sandbox_id: string | null;
  files: Uint8Array | null;
  files_size: string | number | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS =
  "id, tenant_id, name, docker_image, fs_capacity_bytes, source_sandbox_id, files_size, created_at, updated_at";

export async function createSnapshot(
  db: SqlExecutor,
  s: {
    tenantId: string;
    name: string;
    dockerImage: string;
    fsCapacityBytes?: number | null;
    sourceSandboxId?: string;
    files?: Uint8Array;
  },
): Promise<SnapshotRow> {
  const { rows } = await db.query<SnapshotRow>(
    `INSERT INTO platform_sandbox_snapshots (id, tenant_id, name, docker_image, fs_capacity_bytes, source_sandbox_id, files, files_size)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant_id, name) DO NOTHING RETURNING ${COLUMNS}`,
    [
      randomUUID(),
      s.tenantId,
      s.name,
      s.dockerImage,
      s.fsCapacityBytes ?? null,
      s.sourceSandboxId ?? null,
      s.files ?? null,
      s.files?.byteLength ?? null,
    ],
  );
  if (!rows[0]) throw agentcliError(SnapshotNameTaken, { name: s.name });
  return rows[0];
}

/** Which snapshot of a tenant: by id or (for `snapshot_name`) by name; its `files` only when asked. */
export interface SnapshotLookup {
  tenantId: string;
  id?: string;
  name?: string;
  withFiles?: boolean;
}

export async function getSnapshot(db: SqlExecutor, by: SnapshotLookup): Promise<SnapshotRow> {
  const cols = by.withFiles ? `${COLUMNS}, files` : COLUMNS;
  const { rows } = by.id !== undefined
    ? (isUuid(by.id)
      ? await db.query<SnapshotRow>(
        `SELECT ${cols} FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND id = $2`,
        [by.tenantId, by.id],
      )
      : { rows: [] })
    : await db.query<SnapshotRow>(
      `SELECT ${cols} FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND name = $2`,
      [by.tenantId, by.name],
    );
  if (!rows[0]) throw notFound("snapshot", by.id ?? by.name ?? "");
  return rows[0];
}

export async function listSnapshots(
  db: SqlExecutor,
  tenantId: string,
  q: { nameContains?: string; limit: number; offset: number },
): Promise<SnapshotRow[]> {
  return (await db.query<SnapshotRow>(
    `SELECT ${COLUMNS} FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND ($2::text IS NULL OR strpos(lower(name), lower($2)) > 0)
     ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
    [tenantId, q.nameContains ?? null, q.limit, q.offset],
  )).rows;
}

export async function deleteSnapshot(db: SqlExecutor, tenantId: string, id: string): Promise<void> {
  const r = isUuid(id)
    ? await db.query("DELETE FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND id = $2", [tenantId, id])
    : { rowCount: 0 };
  if (!r.rowCount) throw notFound("snapshot", id);
}
