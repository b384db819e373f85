/**
 * The control plane's own sandboxes: rows of `platform_sandboxes` (one tenant never reads
 * another's), the runtime each runs on, and their life: created ready, stopped after
 * `idle_ttl_seconds` without use (files kept), resumed by the next command or file
 * transfer, deleted `delete_after_stop_seconds` after stopping (0: never).
 *
 * @example
 * const boxes = new SandboxService({ sql, local: new LocalBoxRuntime({ dataDir }) });
 * const row = await boxes.create(caller, { name: "work", image: "python:3" });
 * const p = await boxes.spawn(row, { argv: ["/bin/bash", "-c", "ls"] });
 */
import { randomUUID } from "node:crypto";
import { isUserError, userError } from "../errors.ts";
import type { SqlDriver, SqlExecutor } from "../storage/sql.ts";
import { conflict, notFound } from "./api-error.ts";
import { collect, type BoxProcess, type BoxRuntime, type BoxSpec, type SpawnOptions } from "./sandbox-runtime.ts";
import { isUuid } from "./store.ts";
import type { Caller } from "./tenancy.ts";

export interface SandboxRow {
  id: string;
  tenant_id: string;
  name: string;
  status: "provisioning" | "ready" | "failed" | "stopped";
  status_message: string | null;
  image: string;
  runtime: string;
  listener_id: string | null;
  created_by_deployment: string | null;
  idle_ttl_seconds: number;
  delete_after_stop_seconds: number;
  vcpus: number | null;
  mem_bytes: string | number | null;
  fs_capacity_bytes: string | number | null;
  created_at: Date | string;
  updated_at: Date | string;
  last_used_at: Date | string;
  stopped_at: Date | string | null;
  snapshot_id: string | null;
}

/** Defaults the LangSmith client documents: stop after 10 idle minutes; keep a stopped sandbox. */
export const DEFAULT_IDLE_TTL_SECONDS = 600;
export const DEFAULT_DELETE_AFTER_STOP_SECONDS = 0;
export const DEFAULT_IMAGE = "python:3";

export interface SandboxCreate {
  name?: string;
  image?: string;
  idleTtlSeconds?: number;
  deleteAfterStopSeconds?: number;
  vcpus?: number;
  memBytes?: number;
  fsCapacityBytes?: number;
  /** A `k8s` listener of the tenant to run it on (absent: this machine, with bubblewrap). */
  listenerId?: string | null;
  /** A tar archive (a snapshot's files) unpacked into its `/home/user` before it is ready. */
  files?: Uint8Array | null;
  snapshotId?: string | null;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());
const num = (v: string | number | null) => (v === null ? null : Number(v));

/** The API form of a row (LangSmith's `SandboxData`, plus `image`). */
export function sandboxResource(row: SandboxRow, dataplaneUrl: string) {
  return {
    id: row.id,
    name: row.name,
    dataplane_url: dataplaneUrl,
    status: row.status,
    status_message: row.status_message ?? undefined,
    image: row.image,
    snapshot_id: row.snapshot_id ?? undefined,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    idle_ttl_seconds: row.idle_ttl_seconds,
    delete_after_stop_seconds: row.delete_after_stop_seconds,
    stopped_at: iso(row.stopped_at),
    vcpus: row.vcpus,
    mem_bytes: num(row.mem_bytes),
    fs_capacity_bytes: num(row.fs_capacity_bytes),
  };
}

async function unpack(runtime: BoxRuntime, id: string, files: Uint8Array): Promise<void> {
  const p = runtime.spawn(id, { argv: ["/bin/sh", "-c", 'head -c "$1" | tar -C /home/user -xf -', "sh", String(files.byteLength)], timeoutMs: 300_000 });
  p.write(files);
  p.end();
  const r = await collect(p, 64 * 1024);
  if (r.exitCode !== 0) throw new Error(`cannot unpack the snapshot's files: ${new TextDecoder().decode(r.stderr).trim() || `tar exited with ${r.exitCode}`}`);
}

function spec(row: SandboxRow): BoxSpec {
  return { id: row.id, tenantId: row.tenant_id, image: row.image, memBytes: num(row.mem_bytes), vcpus: row.vcpus, fsCapacityBytes: num(row.fs_capacity_bytes) };
}

export class SandboxService {
  readonly #sql: SqlDriver;
  readonly #local: BoxRuntime;
  readonly #onListener: (listenerId: string) => Promise<BoxRuntime>;
  readonly #onError: (err: unknown) => void;
  readonly #sweeper: ReturnType<typeof setInterval> | null;

  /** `onListener`: the runtime of a `k8s` listener's sandboxes. */
  constructor(opts: { sql: SqlDriver; local: BoxRuntime; onListener?: (listenerId: string) => Promise<BoxRuntime>; onError?: (err: unknown) => void; sweepMs?: number }) {
    this.#sql = opts.sql;
    this.#local = opts.local;
    this.#onListener = opts.onListener ?? (async () => {
      throw new Error("this control plane runs sandboxes on its own machine only");
    });
    this.#onError = opts.onError ?? ((err) => console.error("platform: sandbox sweep:", err));
    const sweepMs = opts.sweepMs ?? 15_000;
    this.#sweeper = sweepMs > 0 ? setInterval(() => void this.sweep().catch(this.#onError), sweepMs) : null;
    this.#sweeper?.unref?.();
  }

  runtimeOf(row: Pick<SandboxRow, "listener_id">): Promise<BoxRuntime> {
    return row.listener_id ? this.#onListener(row.listener_id) : Promise.resolve(this.#local);
  }

  async get(tenantId: string, name: string): Promise<SandboxRow> {
    const { rows } = await this.#sql.query<SandboxRow>("SELECT * FROM platform_sandboxes WHERE tenant_id = $1 AND name = $2", [tenantId, name]);
    if (!rows[0]) throw notFound("sandbox", name);
    return rows[0];
  }

  /** The sandbox a dataplane URL names (by id), for its tenant only. */
  async byId(tenantId: string, id: string): Promise<SandboxRow> {
    const { rows } = isUuid(id)
      ? await this.#sql.query<SandboxRow>("SELECT * FROM platform_sandboxes WHERE tenant_id = $1 AND id = $2", [tenantId, id])
      : { rows: [] as SandboxRow[] };
    if (!rows[0]) throw notFound("sandbox", id);
    return rows[0];
  }

  async list(tenantId: string): Promise<SandboxRow[]> {
    return (await this.#sql.query<SandboxRow>("SELECT * FROM platform_sandboxes WHERE tenant_id = $1 ORDER BY created_at, id", [tenantId])).rows;
  }

  /**
   * Creates a sandbox and its machine; on failure nothing stays behind (no row, no folder
   * or pod). A taken name is a 409.
   */
  async create(caller: Caller, req: SandboxCreate): Promise<SandboxRow> {
    const id = randomUUID();
    const name = req.name ?? `sandbox-${id.slice(0, 8)}`;
    const { rows } = await this.#sql.query<SandboxRow>(
      `INSERT INTO platform_sandboxes (id, tenant_id, name, status, image, runtime, created_by_deployment, idle_ttl_seconds, delete_after_stop_seconds, vcpus, mem_bytes, fs_capacity_bytes, listener_id, snapshot_id)
       VALUES ($1, $2, $3, 'provisioning', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (tenant_id, name) DO NOTHING RETURNING *`,
      [id, caller.tenantId, name, req.image ?? DEFAULT_IMAGE, req.listenerId ? "k8s" : this.#local.kind, caller.deploymentId ?? null,
        req.idleTtlSeconds ?? DEFAULT_IDLE_TTL_SECONDS, req.deleteAfterStopSeconds ?? DEFAULT_DELETE_AFTER_STOP_SECONDS,
        req.vcpus ?? null, req.memBytes ?? null, req.fsCapacityBytes ?? null, req.listenerId ?? null, req.snapshotId ?? null],
    );
    if (!rows[0]) throw conflict(`Cannot create sandbox "${name}": a sandbox of that name exists`);
    const row = rows[0];
    try {
      const runtime = await this.runtimeOf(row);
      await runtime.create(spec(row));
      if (req.files?.byteLength) await unpack(runtime, id, req.files);
    } catch (err) {
      await (await this.runtimeOf(row)).remove(id).catch(() => {});
      await this.#sql.query("DELETE FROM platform_sandboxes WHERE id = $1", [id]);
      if (isUserError(err)) throw err;
      throw userError("REMOTE_FAILED", { message: `Cannot create sandbox "${name}": ${(err as Error).message}`, status: 503, cause: err });
    }
    return (await this.#sql.query<SandboxRow>(
      "UPDATE platform_sandboxes SET status = 'ready', updated_at = now(), last_used_at = now() WHERE id = $1 RETURNING *", [id],
    )).rows[0]!;
  }

  /** Renames a sandbox or changes its lifetimes. */
  async update(row: SandboxRow, patch: { name?: string; idleTtlSeconds?: number; deleteAfterStopSeconds?: number }): Promise<SandboxRow> {
    try {
      const { rows } = await this.#sql.query<SandboxRow>(
        `UPDATE platform_sandboxes SET name = COALESCE($2, name), idle_ttl_seconds = COALESCE($3, idle_ttl_seconds),
           delete_after_stop_seconds = COALESCE($4, delete_after_stop_seconds), updated_at = now() WHERE id = $1 RETURNING *`,
        [row.id, patch.name ?? null, patch.idleTtlSeconds ?? null, patch.deleteAfterStopSeconds ?? null],
      );
      return rows[0]!;
    } catch (err) {
      if ((err as { code?: string }).code === "23505") throw conflict(`Cannot rename sandbox "${row.name}": "${patch.name}" is taken`);
      throw err;
    }
  }

  async delete(row: SandboxRow): Promise<void> {
    await (await this.runtimeOf(row)).remove(row.id);
    await this.#sql.query("DELETE FROM platform_sandboxes WHERE id = $1", [row.id]);
  }

  /** Stops a sandbox's processes; its files stay until it is deleted. */
  async stop(row: SandboxRow): Promise<SandboxRow> {
    await (await this.runtimeOf(row)).stop(row.id);
    return (await this.#sql.query<SandboxRow>(
      "UPDATE platform_sandboxes SET status = 'stopped', stopped_at = COALESCE(stopped_at, now()), updated_at = now() WHERE id = $1 RETURNING *", [row.id],
    )).rows[0]!;
  }

  /** Marks a sandbox used now, resuming it when stopped. */
  async touch(row: SandboxRow): Promise<SandboxRow> {
    if (row.status === "stopped") await (await this.runtimeOf(row)).create(spec(row));
    return (await this.#sql.query<SandboxRow>(
      "UPDATE platform_sandboxes SET status = 'ready', stopped_at = NULL, last_used_at = now(), updated_at = CASE WHEN status = 'ready' THEN updated_at ELSE now() END WHERE id = $1 RETURNING *",
      [row.id],
    )).rows[0] ?? row;
  }

  /** Starts a process in the sandbox (resuming it first when stopped). */
  async spawn(row: SandboxRow, opts: SpawnOptions): Promise<BoxProcess> {
    await this.touch(row);
    return (await this.runtimeOf(row)).spawn(row.id, opts);
  }

  /** Stops idle sandboxes and deletes those stopped past their `delete_after_stop_seconds`. */
  async sweep(): Promise<void> {
    const idle = await this.#sql.query<SandboxRow>(
      `SELECT * FROM platform_sandboxes WHERE status = 'ready' AND idle_ttl_seconds > 0
         AND last_used_at + idle_ttl_seconds * interval '1 second' < now()`,
    );
    for (const row of idle.rows) await this.stop(row);
    const expired = await this.#sql.query<SandboxRow>(
      `SELECT * FROM platform_sandboxes WHERE status = 'stopped' AND delete_after_stop_seconds > 0
         AND stopped_at + delete_after_stop_seconds * interval '1 second' < now()`,
    );
    for (const row of expired.rows) await this.delete(row);
  }

  /** Deletes every sandbox a deployment created (its teardown). */
  async deleteForDeployment(db: SqlExecutor, deploymentId: string): Promise<void> {
    const { rows } = await db.query<SandboxRow>("SELECT * FROM platform_sandboxes WHERE created_by_deployment = $1", [deploymentId]);
    for (const row of rows) await this.delete(row);
  }

  async close(): Promise<void> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    await this.#local.close();
  }
}
