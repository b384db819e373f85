/**
 * The sandbox API under `/v2/sandboxes`, wire-compatible with LangSmith's (what the
 * `langsmith/sandbox` client speaks): `boxes` (create, list, get, patch, delete, status,
 * start, stop) and each sandbox's data plane at `dataplane_url`
 * (`/v2/sandboxes/dataplane/{id}`, ./dataplane.ts), and snapshots (./snapshots.ts). Every
 * route needs `X-Api-Key`; a sandbox is reached only by its own tenant. This file: the boxes.
 *
 * @example
 * const client = new SandboxClient({ apiEndpoint: `${cp}/v2/sandboxes`, apiKey });
 * const box = await client.createSandbox({ name: "work" });
 * await box.run("echo hi");
 */
import { type Context, Hono } from "hono";
import { invalidField } from "../api/api-error.ts";
import type { PlatformEnv, PlatformServices } from "../api/context.ts";
import { sandboxResource, type SandboxRow } from "../store/sandboxes.ts";
import { getSnapshot } from "../store/snapshots.ts";
import { getDeployment } from "../store/deployments.ts";
import { type Caller, getListener } from "../store/tenancy.ts";
import { dataplaneRoutes } from "./dataplane.ts";
import { body, CreateBody, PatchBody } from "./sandbox-bodies.ts";
import { snapshotRoutes } from "./snapshots.ts";

function dataplaneUrl(s: PlatformServices, c: Context, row: SandboxRow): string {
  const base = (s.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, "");
  return `${base}/v2/sandboxes/dataplane/${row.id}`;
}

/** The sandbox API's app: the boxes, their snapshots, their data planes. */
export function sandboxRoutes(s: PlatformServices): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  boxRoutes(app, s);
  snapshotRoutes(app, s);
  dataplaneRoutes(app, s);
  return app;
}

/** The boxes: create, list, get, patch, delete, status, start, stop. */
function boxRoutes(app: Hono<PlatformEnv>, s: PlatformServices): void {
  const boxes = s.sandboxes;
  const out = (c: Context<PlatformEnv>, row: SandboxRow) => sandboxResource(row, dataplaneUrl(s, c, row));

  app.post("/boxes", async (c) => {
    const b = await body(c, CreateBody);
    if (b.mount_config !== undefined || b.proxy_config !== undefined) {
      throw invalidField(
        ["body", b.mount_config !== undefined ? "mount_config" : "proxy_config"],
        "is not supported by this control plane",
        "value_error",
      );
    }
    if (b.snapshot_id !== undefined && b.snapshot_name !== undefined) {
      throw invalidField(
        ["body", "snapshot_name"],
        "snapshot_name: give snapshot_id or snapshot_name, not both",
        "value_error",
      );
    }
    const from = b.snapshot_id ?? b.snapshot_name;
    if (from !== undefined && b.image !== undefined) {
      throw invalidField(["body", "image"], "image: a sandbox from a snapshot has the snapshot's image", "value_error");
    }
    const snap = from === undefined ? null : await getSnapshot(s.sql, {
      tenantId: c.var.caller.tenantId,
      ...(b.snapshot_id !== undefined ? { id: b.snapshot_id } : { name: b.snapshot_name }),
      withFiles: true,
    });
    const row = await boxes.create(c.var.caller, {
      name: b.name,
      image: snap?.docker_image ?? b.image,
      files: snap?.files,
      snapshotId: snap?.id,
      listenerId: await listenerFor(s, c.var.caller, b.listener_id),
      idleTtlSeconds: b.idle_ttl_seconds,
      deleteAfterStopSeconds: b.delete_after_stop_seconds,
      vcpus: b.vcpus,
      memBytes: b.mem_bytes,
      fsCapacityBytes: b.fs_capacity_bytes,
    });
    return c.json(out(c, row), 201);
  });
  app.get(
    "/boxes",
    async (c) => c.json({ sandboxes: (await boxes.list(c.var.caller.tenantId)).map((r) => out(c, r)) }),
  );
  app.get("/boxes/:name", async (c) => c.json(out(c, await boxes.get(c.var.caller.tenantId, c.req.param("name")))));
  app.patch("/boxes/:name", async (c) => {
    const row = await boxes.get(c.var.caller.tenantId, c.req.param("name"));
    const b = await body(c, PatchBody);
    return c.json(
      out(
        c,
        await boxes.update(row, {
          name: b.name,
          idleTtlSeconds: b.idle_ttl_seconds,
          deleteAfterStopSeconds: b.delete_after_stop_seconds,
        }),
      ),
    );
  });
  app.delete("/boxes/:name", async (c) => {
    const row = await boxes.get(c.var.caller.tenantId, c.req.param("name"));
    s.commands.drop(row.id);
    await boxes.delete(row);
    return c.body(null, 204);
  });
  app.get("/boxes/:name/status", async (c) => {
    const row = await boxes.get(c.var.caller.tenantId, c.req.param("name"));
    return c.json({ status: row.status, ...(row.status_message ? { status_message: row.status_message } : {}) });
  });
  app.post(
    "/boxes/:name/start",
    async (c) => c.json(out(c, await boxes.touch(await boxes.get(c.var.caller.tenantId, c.req.param("name"))))),
  );
  app.post("/boxes/:name/stop", async (c) => {
    const row = await boxes.get(c.var.caller.tenantId, c.req.param("name"));
    s.commands.drop(row.id);
    return c.json(out(c, await boxes.stop(row)));
  });
}

/**
 * The `k8s` listener a new sandbox runs on: the one named by `listener_id` (our extension),
 * else the one of the deployment whose key creates it; null: this machine.
 */
async function listenerFor(s: PlatformServices, caller: Caller, named: string | undefined): Promise<string | null> {
  if (named !== undefined) {
    const l = await getListener(s.sql, caller.tenantId, named);
    if (!l) {
      throw invalidField(["body", "listener_id"], `listener_id: "${named}" is not a listener of yours`, "value_error");
    }
    if (l.compute_type !== "k8s") {
      throw invalidField(
        ["body", "listener_id"],
        `listener_id: "${named}" is not a k8s listener (omit it to run on the control plane's machine)`,
        "value_error",
      );
    }
    return l.id;
  }
  if (!caller.deploymentId) return null;
  const d = await getDeployment(s.sql, caller.tenantId, caller.deploymentId);
  const l = d?.source_config.listener_id
    ? await getListener(s.sql, caller.tenantId, d.source_config.listener_id)
    : null;
  return l?.compute_type === "k8s" ? l.id : null;
}
