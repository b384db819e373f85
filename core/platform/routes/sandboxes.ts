/**
 * The sandbox API under `/v2/sandboxes`, wire-compatible with LangSmith's (what the
 * `langsmith/sandbox` client speaks): `boxes` (create, list, get, patch, delete, status,
 * start, stop) and each sandbox's data plane at `dataplane_url`
 * (`/v2/sandboxes/dataplane/{id}`): `POST /execute` (blocking), `GET /execute/ws` (streaming,
 * `sandbox-ws.ts`), `POST /upload?path=` (multipart `file`), `GET /download?path=`. Every
 * route needs `X-Api-Key`; a sandbox is reached only by its own tenant.
 *
 * @example
 * const client = new SandboxClient({ apiEndpoint: `${cp}/v2/sandboxes`, apiKey });
 * const box = await client.createSandbox({ name: "work" });
 * await box.run("echo hi");
 */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { userError } from "../../kernel/index.ts";
import { invalid, invalidField, payloadTooLarge } from "../api/api-error.ts";
import type { PlatformEnv, PlatformServices } from "../api/context.ts";
import { describeLimit } from "../api/limits.ts";
import { readBodyText } from "../api/request.ts";
import { issuesToDetail } from "../api/schema.ts";
import { type BoxFileError, collect } from "../sandboxes/runtime.ts";
import {
  createSnapshot,
  deleteSnapshot,
  getSnapshot,
  listSnapshots,
  snapshotResource,
} from "../sandboxes/snapshots.ts";
import { sandboxResource, type SandboxRow, SNAPSHOT_ARCHIVE } from "../store/sandboxes.ts";
import { getDeployment } from "../store/deployments.ts";
import { type Caller, getListener } from "../store/tenancy.ts";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const name = z.string().regex(NAME, "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit");
const ttl = z.number().int().nonnegative().refine((v) => v % 60 === 0, "must be a multiple of 60 seconds (0 disables)");

const CreateBody = z.strictObject({
  name: name.optional(),
  image: z.string().min(1).optional(),
  wait_for_ready: z.boolean().optional(),
  timeout: z.number().int().positive().optional(),
  snapshot_id: z.string().optional(),
  snapshot_name: z.string().optional(),
  idle_ttl_seconds: ttl.optional(),
  delete_after_stop_seconds: ttl.optional(),
  vcpus: z.number().int().positive().optional(),
  mem_bytes: z.number().int().positive().optional(),
  fs_capacity_bytes: z.number().int().positive().optional(),
  mount_config: z.unknown().optional(),
  proxy_config: z.unknown().optional(),
  listener_id: z.string().optional(),
});

const PatchBody = z.strictObject({
  name: name.optional(),
  idle_ttl_seconds: ttl.optional(),
  delete_after_stop_seconds: ttl.optional(),
});

const SnapshotBody = z.strictObject({
  name,
  docker_image: z.string().min(1),
  fs_capacity_bytes: z.number().int().positive().optional(),
  registry_id: z.string().optional(),
});

const CaptureBody = z.strictObject({
  name,
  docker_image: z.string().min(1).optional(),
  fs_capacity_bytes: z.number().int().positive().optional(),
});

const SnapshotQuery = z.object({
  name_contains: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});

const ExecuteBody = z.strictObject({
  command: z.string().min(1),
  timeout: z.number().nonnegative().optional(),
  shell: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
});

/** Reads and validates a JSON body; every problem is a 422 `value_error` naming the field (what the LangSmith client maps to a validation error). */
async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await readBodyText(c, (c.get("maxBodyBytes") as number | undefined) ?? Infinity);
  let raw: unknown;
  try {
    raw = text.trim() ? JSON.parse(text) : {};
  } catch {
    throw invalidField(["body"], "is not valid JSON", "value_error");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidField(["body"], "must be a JSON object", "value_error");
  }
  const parsed = schema.safeParse(raw);
  // The LangSmith client shows `msg` alone, so it names the field too.
  if (!parsed.success) {
    throw invalid(
      issuesToDetail(parsed.error.issues, "body").map((d) => ({
        ...d,
        msg: `${d.loc.slice(1).join(".") || "body"}: ${d.msg}`,
        type: "value_error",
      })),
    );
  }
  return parsed.data;
}

/** A data-plane error in LangSmith's shape (`{"detail": {"error", "message"}}`), which its client maps by `error`. */
function opError(c: Context, status: 400 | 404 | 408 | 413, error: string, message: string): Response {
  return c.json({ detail: { error, message } }, status);
}

function dataplaneUrl(s: PlatformServices, c: Context, row: SandboxRow): string {
  const base = (s.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, "");
  return `${base}/v2/sandboxes/dataplane/${row.id}`;
}

export function sandboxRoutes(s: PlatformServices): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
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
    const snap = from === undefined ? null : await getSnapshot(
      s.sql,
      c.var.caller.tenantId,
      b.snapshot_id !== undefined ? { id: b.snapshot_id } : { name: b.snapshot_name },
      true,
    );
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

  app.post("/boxes/:name/snapshot", async (c) => {
    const row = await boxes.get(c.var.caller.tenantId, c.req.param("name"));
    const b = await body(c, CaptureBody);
    const { runtime, ref } = await boxes.use(row);
    const archive = `${runtime.workdir}/${SNAPSHOT_ARCHIVE}`;
    const packed = await collect(
      runtime.run(ref, {
        command: `tar -C ${runtime.workdir} --exclude=./${SNAPSHOT_ARCHIVE} -cf ${archive} . 2>&1`,
        timeoutMs: 300_000,
      }),
      64 * 1024,
    );
    const files = packed.exitCode === 0 ? await runtime.download(ref, archive, s.limits.maxUploadBytes) : null;
    await collect(runtime.run(ref, { command: `rm -f ${archive}`, timeoutMs: 60_000 }));
    if (!files || files.error === "too_large") {
      if (files) {
        throw payloadTooLarge(
          `Cannot capture sandbox "${row.name}": its files are larger than ${
            describeLimit("maxUploadBytes", s.limits.maxUploadBytes)
          }`,
        );
      }
      throw userError("REMOTE_FAILED", {
        message: `Cannot capture sandbox "${row.name}": ${
          new TextDecoder().decode(packed.stdout).trim() || `tar exited with ${packed.exitCode}`
        }`,
        status: 422,
      });
    }
    if (files.error) {
      throw userError("REMOTE_FAILED", {
        message: `Cannot capture sandbox "${row.name}": ${files.error}`,
        status: 422,
      });
    }
    const snap = await createSnapshot(s.sql, {
      tenantId: c.var.caller.tenantId,
      name: b.name,
      dockerImage: b.docker_image ?? row.image,
      fsCapacityBytes: b.fs_capacity_bytes ?? (row.fs_capacity_bytes === null ? null : Number(row.fs_capacity_bytes)),
      sourceSandboxId: row.id,
      files: files.content,
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
    async (c) => c.json(snapshotResource(await getSnapshot(s.sql, c.var.caller.tenantId, { id: c.req.param("id") }))),
  );
  app.delete("/snapshots/:id", async (c) => {
    await deleteSnapshot(s.sql, c.var.caller.tenantId, c.req.param("id"));
    return c.body(null, 204);
  });

  const dp = "/dataplane/:id";
  app.post(`${dp}/execute`, async (c) => {
    const row = await boxes.byId(c.var.caller.tenantId, c.req.param("id"));
    const b = await body(c, ExecuteBody);
    const timeout = b.timeout ?? 60;
    const { runtime, ref } = await boxes.use(row);
    const proc = runtime.run(ref, {
      command: b.command,
      shell: b.shell,
      env: b.env,
      cwd: b.cwd,
      timeoutMs: timeout * 1000,
    });
    const r = await collect(proc);
    if (r.timedOut) return opError(c, 408, "CommandTimeout", `Command timed out after ${timeout}s`);
    const text = new TextDecoder();
    return c.json({ stdout: text.decode(r.stdout), stderr: text.decode(r.stderr), exit_code: r.exitCode ?? -1 });
  });
  app.get(
    `${dp}/execute/ws`,
    (c) => c.json({ detail: "Cannot execute: this endpoint takes a WebSocket upgrade" }, 426),
  );
  app.post(`${dp}/upload`, async (c) => {
    const row = await boxes.byId(c.var.caller.tenantId, c.req.param("id"));
    const path = filePath(c);
    const declared = Number(c.req.header("content-length") ?? 0);
    if (declared > s.limits.maxUploadBytes) {
      return opError(
        c,
        413,
        "WriteError",
        `Cannot write "${path}": the upload is larger than ${describeLimit("maxUploadBytes", s.limits.maxUploadBytes)}`,
      );
    }
    let file: FormDataEntryValue | null;
    try {
      file = (await c.req.formData()).get("file");
    } catch {
      throw invalidField(["body"], "must be multipart/form-data with a 'file' part", "value_error");
    }
    if (!file || typeof file === "string") {
      throw invalidField(["body", "file"], "is missing (multipart part 'file' with the file's bytes)", "value_error");
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    const { runtime, ref } = await boxes.use(row);
    const error = await runtime.upload(ref, path, bytes);
    if (error) return opError(c, 400, "WriteError", `Cannot write "${path}": ${FILE_ERROR_TEXT[error]}`);
    return c.json({ path, size: bytes.byteLength });
  });
  app.get(`${dp}/download`, async (c) => {
    const row = await boxes.byId(c.var.caller.tenantId, c.req.param("id"));
    const path = filePath(c);
    const { runtime, ref } = await boxes.use(row);
    const r = await runtime.download(ref, path, s.limits.maxUploadBytes);
    if (r.error === "file_not_found") return opError(c, 404, "FileNotFound", `Cannot read "${path}": no such file`);
    if (r.error === "too_large") {
      return opError(
        c,
        413,
        "ReadError",
        `Cannot read "${path}": it is larger than ${describeLimit("maxUploadBytes", s.limits.maxUploadBytes)}`,
      );
    }
    if (r.error) return opError(c, 400, "ReadError", `Cannot read "${path}": ${FILE_ERROR_TEXT[r.error]}`);
    return c.body(r.content as Uint8Array<ArrayBuffer>, 200, { "content-type": "application/octet-stream" });
  });
  return app;
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

const FILE_ERROR_TEXT: Record<BoxFileError, string> = {
  file_not_found: "no such file",
  is_directory: "it is a directory",
  permission_denied: "permission denied",
  invalid_path: "the path is not absolute",
};

function filePath(c: Context): string {
  const path = c.req.query("path");
  if (!path) throw invalidField(["query", "path"], "is required (the file's path in the sandbox)", "value_error");
  if (path.includes("\0")) throw invalidField(["query", "path"], "must not contain NUL", "value_error");
  return path;
}

/** The request bodies above, for the control plane's OpenAPI document (../api/openapi.ts). */
export const SANDBOX_BODIES = { CreateBody, PatchBody, SnapshotBody, CaptureBody, ExecuteBody };
