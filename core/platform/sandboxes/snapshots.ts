/**
 * Snapshots of the sandbox API: an image to create sandboxes from (`POST /snapshots` with
 * `docker_image`), or an image plus the files of a sandbox's working directory, captured as a tar
 * archive by running `tar` in the sandbox (`POST /boxes/{name}/snapshot`) and unpacked into
 * each sandbox created from it. Ready at once; rows of `platform_sandbox_snapshots`, per tenant.
 */
import { randomUUID } from "node:crypto";
import type { SqlDriver } from "../../storage/index.ts";
import { conflict, notFound } from "../api/api-error.ts";
import { isUuid } from "../store/deployments.ts";

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

/** The API form (LangSmith's `Snapshot`). */
export function snapshotResource(row: SnapshotRow) {
  return {
    id: row.id,
    name: row.name,
    status: "ready",
    docker_image: row.docker_image,
    fs_capacity_bytes: row.fs_capacity_bytes === null ? null : Number(row.fs_capacity_bytes),
    fs_used_bytes: row.files_size === null ? 0 : Number(row.files_size),
    source_sandbox_id: row.source_sandbox_id ?? undefined,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export async function createSnapshot(
  sql: SqlDriver,
  s: {
    tenantId: string;
    name: string;
    dockerImage: string;
    fsCapacityBytes?: number | null;
    sourceSandboxId?: string;
    files?: Uint8Array;
  },
): Promise<SnapshotRow> {
  const { rows } = await sql.query<SnapshotRow>(
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
  if (!rows[0]) throw conflict(`Cannot create snapshot "${s.name}": a snapshot of that name exists`);
  return rows[0];
}

/** A snapshot of the tenant by id or (for `snapshot_name`) by name; `files` only when asked. */
export async function getSnapshot(
  sql: SqlDriver,
  tenantId: string,
  by: { id?: string; name?: string },
  withFiles = false,
): Promise<SnapshotRow> {
  const cols = withFiles ? `${COLUMNS}, files` : COLUMNS;
  const { rows } = by.id !== undefined
    ? (isUuid(by.id)
      ? await sql.query<SnapshotRow>(
        `SELECT ${cols} FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND id = $2`,
        [tenantId, by.id],
      )
      : { rows: [] })
    : await sql.query<SnapshotRow>(
      `SELECT ${cols} FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND name = $2`,
      [tenantId, by.name],
    );
  if (!rows[0]) throw notFound("snapshot", by.id ?? by.name ?? "");
  return rows[0];
}

export async function listSnapshots(
  sql: SqlDriver,
  tenantId: string,
  q: { nameContains?: string; limit: number; offset: number },
): Promise<SnapshotRow[]> {
  return (await sql.query<SnapshotRow>(
    `SELECT ${COLUMNS} FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND ($2::text IS NULL OR strpos(lower(name), lower($2)) > 0)
     ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
    [tenantId, q.nameContains ?? null, q.limit, q.offset],
  )).rows;
}

export async function deleteSnapshot(sql: SqlDriver, tenantId: string, id: string): Promise<void> {
  const r = isUuid(id)
    ? await sql.query("DELETE FROM platform_sandbox_snapshots WHERE tenant_id = $1 AND id = $2", [tenantId, id])
    : { rowCount: 0 };
  if (!r.rowCount) throw notFound("snapshot", id);
}
