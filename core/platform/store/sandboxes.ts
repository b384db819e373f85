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
import {
  agentcliError,
  isUserError,
  SandboxCreateFailed,
  SandboxNameTaken,
  SandboxRenameTaken,
} from "../../kernel/index.ts";
import type { SqlDriver, SqlExecutor } from "../../storage/index.ts";
import { notFound } from "../api/api-error.ts";
import { type BoxRuntime, type BoxSpec, collect } from "../sandboxes/runtime.ts";
import { isUuid } from "./deployments.ts";
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
  /** The runtime's own reference to the sandbox (the local runtime's id; the k8s pod's sandbox id). */
  runtime_ref: string | null;
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
  /** A tar archive (a snapshot's files) unpacked into its working directory before it is ready. */
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

/** Where a snapshot's archive passes through a sandbox. */
export const SNAPSHOT_ARCHIVE = ".agentcli-snapshot.tar";

async function unpack(runtime: BoxRuntime, ref: string, files: Uint8Array): Promise<void> {
  const archive = `${runtime.workdir}/${SNAPSHOT_ARCHIVE}`;
  const error = await runtime.upload(ref, archive, files);
  if (error) throw new Error(`cannot copy the snapshot's files in: ${error}`);
  const r = await collect(
    runtime.run(ref, {
      command: `tar -C ${runtime.workdir} -xf ${archive} 2>&1; code=$?; rm -f ${archive}; exit $code`,
      timeoutMs: 300_000,
    }),
    64 * 1024,
  );
  if (r.exitCode !== 0) {
    throw new Error(
      `cannot unpack the snapshot's files: ${
        new TextDecoder().decode(r.stdout).trim() || `tar exited with ${r.exitCode}`
      }`,
    );
  }
}

function spec(row: SandboxRow): BoxSpec {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    image: row.image,
    memBytes: num(row.mem_bytes),
    vcpus: row.vcpus,
    fsCapacityBytes: num(row.fs_capacity_bytes),
  };
}

export class SandboxService {
  readonly #sql: SqlDriver;
  readonly #local: BoxRuntime;
  readonly #onListener: (listenerId: string) => Promise<BoxRuntime>;
  readonly #onError: (err: unknown) => void;
  readonly #sweeper: ReturnType<typeof setInterval> | null;

  /** `onListener`: the runtime of a `k8s` listener's sandboxes. */
  constructor(
    opts: {
      sql: SqlDriver;
      local: BoxRuntime;
      onListener?: (listenerId: string) => Promise<BoxRuntime>;
      onError?: (err: unknown) => void;
      sweepMs?: number;
    },
  ) {
    this.#sql = opts.sql;
    this.#local = opts.local;
    this.#onListener = opts.onListener ?? (async () => {
      throw new Error(
        "SandboxService was given no onListener, so it runs sandboxes on its own machine only (openPlatform passes one)",
      );
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
    const { rows } = await this.#sql.query<SandboxRow>(
      "SELECT * FROM platform_sandboxes WHERE tenant_id = $1 AND name = $2",
      [tenantId, name],
    );
    if (!rows[0]) throw notFound("sandbox", name);
    return rows[0];
  }

  /** The sandbox a dataplane URL names (by id), for its tenant only. */
  async byId(tenantId: string, id: string): Promise<SandboxRow> {
    const { rows } = isUuid(id)
      ? await this.#sql.query<SandboxRow>("SELECT * FROM platform_sandboxes WHERE tenant_id = $1 AND id = $2", [
        tenantId,
        id,
      ])
      : { rows: [] as SandboxRow[] };
    if (!rows[0]) throw notFound("sandbox", id);
    return rows[0];
  }

  async list(tenantId: string): Promise<SandboxRow[]> {
    return (await this.#sql.query<SandboxRow>(
      "SELECT * FROM platform_sandboxes WHERE tenant_id = $1 ORDER BY created_at, id",
      [tenantId],
    )).rows;
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
      [
        id,
        caller.tenantId,
        name,
        req.image ?? DEFAULT_IMAGE,
        req.listenerId ? "k8s" : this.#local.kind,
        caller.deploymentId ?? null,
        req.idleTtlSeconds ?? DEFAULT_IDLE_TTL_SECONDS,
        req.deleteAfterStopSeconds ?? DEFAULT_DELETE_AFTER_STOP_SECONDS,
        req.vcpus ?? null,
        req.memBytes ?? null,
        req.fsCapacityBytes ?? null,
        req.listenerId ?? null,
        req.snapshotId ?? null,
      ],
    );
    if (!rows[0]) throw agentcliError(SandboxNameTaken, { name });
    const row = rows[0];
    let ref: string | null = null;
    try {
      const runtime = await this.runtimeOf(row);
      ref = await runtime.create(spec(row));
      if (req.files?.byteLength) await unpack(runtime, ref, req.files);
    } catch (err) {
      if (ref) await (await this.runtimeOf(row)).remove(ref).catch(() => {});
      await this.#sql.query("DELETE FROM platform_sandboxes WHERE id = $1", [id]);
      // A request's own error goes back as it is; a cluster's (REMOTE_FAILED) is why the machine was not made.
      if (isUserError(err) && err.code !== "REMOTE_FAILED") throw err;
      throw agentcliError(SandboxCreateFailed, { name, reason: (err as Error).message }, { status: 503, cause: err });
    }
    return (await this.#sql.query<SandboxRow>(
      "UPDATE platform_sandboxes SET status = 'ready', runtime_ref = $2, updated_at = now(), last_used_at = now() WHERE id = $1 RETURNING *",
      [id, ref],
    )).rows[0]!;
  }

  /** Renames a sandbox or changes its lifetimes. */
  async update(
    row: SandboxRow,
    patch: { name?: string; idleTtlSeconds?: number; deleteAfterStopSeconds?: number },
  ): Promise<SandboxRow> {
    try {
      const { rows } = await this.#sql.query<SandboxRow>(
        `UPDATE platform_sandboxes SET name = COALESCE($2, name), idle_ttl_seconds = COALESCE($3, idle_ttl_seconds),
           delete_after_stop_seconds = COALESCE($4, delete_after_stop_seconds), updated_at = now() WHERE id = $1 RETURNING *`,
        [row.id, patch.name ?? null, patch.idleTtlSeconds ?? null, patch.deleteAfterStopSeconds ?? null],
      );
      return rows[0]!;
    } catch (err) {
      if ((err as { code?: string }).code === "23505") {
        throw agentcliError(SandboxRenameTaken, { name: row.name, to: String(patch.name) });
      }
      throw err;
    }
  }

  async delete(row: SandboxRow): Promise<void> {
    if (row.runtime_ref) await (await this.runtimeOf(row)).remove(row.runtime_ref);
    await this.#sql.query("DELETE FROM platform_sandboxes WHERE id = $1", [row.id]);
  }

  /** Stops a sandbox's processes; its files stay until it is deleted. */
  async stop(row: SandboxRow): Promise<SandboxRow> {
    if (row.runtime_ref) await (await this.runtimeOf(row)).stop(row.runtime_ref);
    return (await this.#sql.query<SandboxRow>(
      "UPDATE platform_sandboxes SET status = 'stopped', stopped_at = COALESCE(stopped_at, now()), updated_at = now() WHERE id = $1 RETURNING *",
      [row.id],
    )).rows[0]!;
  }

  /** Marks a sandbox used now, resuming it when stopped. */
  async touch(row: SandboxRow): Promise<SandboxRow> {
    if (row.status === "stopped") await (await this.runtimeOf(row)).create(spec(row), row.runtime_ref);
    return (await this.#sql.query<SandboxRow>(
      "UPDATE platform_sandboxes SET status = 'ready', stopped_at = NULL, last_used_at = now(), updated_at = CASE WHEN status = 'ready' THEN updated_at ELSE now() END WHERE id = $1 RETURNING *",
      [row.id],
    )).rows[0] ?? row;
  }

  /** The sandbox's runtime and reference, resuming it first when stopped (every command and file transfer comes through here). */
  async use(row: SandboxRow): Promise<{ runtime: BoxRuntime; ref: string }> {
    const now = await this.touch(row);
    if (!now.runtime_ref) throw notFound("sandbox", row.name);
    return { runtime: await this.runtimeOf(now), ref: now.runtime_ref };
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
    const { rows } = await db.query<SandboxRow>("SELECT * FROM platform_sandboxes WHERE created_by_deployment = $1", [
      deploymentId,
    ]);
    for (const row of rows) await this.delete(row);
  }

  async close(): Promise<void> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    await this.#local.close();
  }
}
