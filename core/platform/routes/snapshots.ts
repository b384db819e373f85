/**
 * The snapshots of the sandbox API under `/v2/sandboxes`: capture one from a sandbox
 * (`POST /boxes/{name}/snapshot`), create one from an image (`POST /snapshots`), list, get and
 * delete them. A snapshot is reached only by its own tenant.
 */
import type { Hono } from "hono";
import { invalid, invalidField } from "../api/api-error.ts";
import type { PlatformEnv, PlatformServices } from "../api/context.ts";
import { issuesToDetail } from "../api/schema.ts";
import { captureFiles, snapshotResource } from "../sandboxes/snapshots.ts";
import { createSnapshot, deleteSnapshot, getSnapshot, listSnapshots } from "../store/snapshots.ts";
import { body, CaptureBody, SnapshotBody, SnapshotQuery } from "./sandbox-bodies.ts";

/** Adds the snapshot routes to the sandbox API's app. */
export function snapshotRoutes(app: Hono<PlatformEnv>, s: PlatformServices): void {
  app.post("/boxes/:name/snapshot", async (c) => {
    const row = await s.sandboxes.get(c.var.caller.tenantId, c.req.param("name"));
    const b = await body(c, CaptureBody);
    const files = await captureFiles(s.sandboxes, row, s.limits.maxUploadBytes);
    const snap = await createSnapshot(s.sql, {
      tenantId: c.var.caller.tenantId,
      name: b.name,
      dockerImage: b.docker_image ?? row.image,
      fsCapacityBytes: b.fs_capacity_bytes ?? (row.fs_capacity_bytes === null ? null : Number(row.fs_capacity_bytes)),
      sourceSandboxId: row.id,
      files,
    });
    return c.json(snapshotResource(snap), 201);
  });
  app.post("/snapshots", async (c) => {
    const b = await body(c, SnapshotBody);
    if (b.registry_id !== undefined) {
      throw invalidField(
        ["body", "registry_id"],
        "registry_id: private registries are not supported by this control plane",
        "value_error",
      );
    }
    const snap = await createSnapshot(s.sql, {
      tenantId: c.var.caller.tenantId,
      name: b.name,
      dockerImage: b.docker_image,
      fsCapacityBytes: b.fs_capacity_bytes,
    });
    return c.json(snapshotResource(snap), 201);
  });
  app.get("/snapshots", async (c) => {
    const q = SnapshotQuery.safeParse(c.req.query());
    if (!q.success) {
      throw invalid(
        issuesToDetail(q.error.issues, "query").map((d) => ({ ...d, msg: `${d.loc.slice(1).join(".")}: ${d.msg}` })),
      );
    }
    const rows = await listSnapshots(s.sql, c.var.caller.tenantId, {
      nameContains: q.data.name_contains,
      limit: q.data.limit ?? 50,
      offset: q.data.offset ?? 0,
    });
    return c.json({ snapshots: rows.map(snapshotResource) });
  });
  app.get(
    "/snapshots/:id",
    async (c) =>
      c.json(snapshotResource(await getSnapshot(s.sql, { tenantId: c.var.caller.tenantId, id: c.req.param("id") }))),
  );
  app.delete("/snapshots/:id", async (c) => {
    await deleteSnapshot(s.sql, c.var.caller.tenantId, c.req.param("id"));
    return c.body(null, 204);
  });
}
