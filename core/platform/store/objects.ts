/**
 * Uploaded and built objects (`platform_objects`): an upload slot reserved with a signed URL and
 * filled once, and build artifacts a revision's rollout (or a rollback) reuses.
 */
import type { SqlExecutor } from "../../storage/index.ts";

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
