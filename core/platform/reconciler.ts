/**
 * Drives revisions through their states, one rollout at a time per deployment:
 *
 *   CREATING -> QUEUED -> AWAITING_BUILD -> BUILDING -> AWAITING_DEPLOY -> DEPLOYING -> DEPLOYED
 *
 * with CREATE_FAILED / BUILD_FAILED / DEPLOY_FAILED (reason in `status_message`, details in the
 * logs), SKIPPED when a newer revision arrives before this one is built, and INTERRUPTED when
 * the deployment is deleted or the control plane stops mid-rollout. `active_revision_id`
 * switches only once the compute reports the new revision healthy.
 * Deployments: AWAITING_DATABASE until storage is provisioned, then READY; AWAITING_DELETE
 * during teardown, after which the row is gone.
 */
import { join } from "node:path";
import type { SqlDriver } from "../storage/sql.ts";
import { BuildFailure, buildRevision, type ProjectBuilders } from "./build.ts";
import type { ComputeDriver } from "./compute.ts";
import { resolveRef } from "./git-source.ts";
import type { DeploymentRow, ListenerRow, RevisionRow } from "./resources.ts";
import type { RevisionStatus } from "./schema.ts";
import {
  appendLog, deleteDeploymentRow, getDeploymentById, getObject, getRevision, putObject, revisionsInStatus, setRevisionStatus, updateDeployment,
} from "./store.ts";
import { getIntegrationById, getListener } from "./tenancy.ts";

export interface ReconcilerOptions {
  sql: SqlDriver;
  dataDir: string;
  /** The compute for a listener (null: the built-in local listener). */
  computeFor: (listener: ListenerRow | null) => ComputeDriver;
  builders: ProjectBuilders;
  onError?: (err: unknown) => void;
}

const IN_FLIGHT: RevisionStatus[] = ["AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"];

export class Reconciler {
  private readonly opts: ReconcilerOptions;
  private readonly running = new Map<string, { dirty: boolean; abort: AbortController; done: Promise<void> }>();
  private closed = false;

  constructor(opts: ReconcilerOptions) {
    this.opts = opts;
  }

  /** Marks rollouts cut short by a restart INTERRUPTED, runs active revisions again, resumes queued work. */
  async start(): Promise<void> {
    const db = this.opts.sql;
    for (const r of await revisionsInStatus(db, IN_FLIGHT)) {
      await setRevisionStatus(db, r.id, "INTERRUPTED", { message: "the control plane stopped during this rollout; deploy again" });
    }
    const { rows } = await db.query<DeploymentRow>("SELECT * FROM platform_deployments");
    for (const d of rows) {
      if (d.status === "AWAITING_DELETE") {
        this.kick(d.id);
        continue;
      }
      if (d.active_revision_id) await this.restore(d).catch((err) => this.opts.onError?.(err));
      this.kick(d.id);
    }
  }

  /** Tells the reconciler a deployment changed; work runs in the background. */
  notify(deploymentId: string): void {
    this.kick(deploymentId);
  }

  /** Resolves once the deployment has no rollout running (tests and shutdown). */
  async idle(deploymentId: string): Promise<void> {
    while (this.running.has(deploymentId)) await this.running.get(deploymentId)!.done;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const r of this.running.values()) r.abort.abort();
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private kick(deploymentId: string): void {
    if (this.closed) return;
    const current = this.running.get(deploymentId);
    if (current) {
      current.dirty = true;
      return;
    }
    const state = { dirty: true, abort: new AbortController(), done: Promise.resolve() };
    state.done = (async () => {
      try {
        while (state.dirty && !this.closed) {
          state.dirty = false;
          await this.reconcile(deploymentId, state.abort.signal).catch((err) => this.opts.onError?.(err));
        }
      } finally {
        this.running.delete(deploymentId);
      }
    })();
    this.running.set(deploymentId, state);
  }

  /** Aborts the running rollout of a deployment (delete). */
  interrupt(deploymentId: string): void {
    this.running.get(deploymentId)?.abort.abort();
  }

  private async listenerOf(d: DeploymentRow): Promise<ListenerRow | null> {
    return d.source_config.listener_id ? await getListener(this.opts.sql, d.tenant_id, d.source_config.listener_id) : null;
  }

  private async reconcile(deploymentId: string, signal: AbortSignal): Promise<void> {
    const db = this.opts.sql;
    const d = await getDeploymentById(db, deploymentId);
    if (!d) return;
    const listener = await this.listenerOf(d);
    const compute = this.opts.computeFor(listener);
    if (d.status === "AWAITING_DELETE") {
      for (const r of await revisionsInStatus(db, ["CREATING", "QUEUED", ...IN_FLIGHT])) {
        if (r.deployment_id === d.id) await setRevisionStatus(db, r.id, "INTERRUPTED", { message: "the deployment was deleted" });
      }
      await compute.teardown(d, listener);
      await deleteDeploymentRow(db, d.id);
      return;
    }
    if (d.status === "AWAITING_DATABASE") {
      await compute.provision(d, listener, () => {});
      await updateDeployment(db, d.id, { status: "READY" });
    }
    const { rows: pending } = await db.query<RevisionRow>(
      "SELECT * FROM platform_revisions WHERE deployment_id = $1 AND status = ANY($2::text[]) ORDER BY seq DESC",
      [d.id, ["CREATING", "QUEUED"]],
    );
    if (!pending.length) return;
    const [newest, ...older] = pending;
    for (const r of older) {
      await setRevisionStatus(db, r.id, "SKIPPED", { from: ["CREATING", "QUEUED"], message: `superseded by revision ${newest!.id} before it was built` });
    }
    await this.rollout(d, newest!, listener, compute, signal);
  }

  private async rollout(d: DeploymentRow, r: RevisionRow, listener: ListenerRow | null, compute: ComputeDriver, signal: AbortSignal): Promise<void> {
    const db = this.opts.sql;
    const log = (kind: "build" | "deploy", message: string) => {
      appendLog(db, r.id, kind, message).catch((err) => this.opts.onError?.(err));
    };
    const step = async (status: RevisionStatus, message: string | null = null) => {
      if (signal.aborted) throw new Interrupted();
      await setRevisionStatus(db, r.id, status, { message });
    };
    let stage: "create" | "build" | "deploy" = "create";
    try {
      if (r.status === "CREATING") {
        if (r.source === "repohost") {
          const integration = d.source_config.integration_id ? await getIntegrationById(db, d.source_config.integration_id) : null;
          const sha = await resolveRef({ repoUrl: d.source_config.repo_url!, ref: r.source_revision_config.repo_ref!, token: integration?.token ?? null });
          r.source_revision_config = { ...r.source_revision_config, repo_commit_sha: sha };
          await setRevisionStatus(db, r.id, "CREATING", { sourceRevisionConfig: r.source_revision_config });
          log("build", `ref "${r.source_revision_config.repo_ref}" is commit ${sha}`);
        }
        await step("QUEUED");
      }
      stage = "build";
      await step("AWAITING_BUILD");
      await step("BUILDING");
      let bundle: Uint8Array | null = null;
      let imageUri = r.source_revision_config.image_uri ?? null;
      const reused = r.artifact_path ? await getObject(db, r.artifact_path) : null;
      if (reused?.bytes) {
        bundle = new Uint8Array(reused.bytes);
        log("build", `reusing the build "${r.artifact_path}"`);
      } else {
        const built = await buildRevision({ db, deployment: d, revision: r, builders: this.opts.builders, workDir: join(this.opts.dataDir, "work"), log: (m) => log("build", m) });
        bundle = built.bundle;
        imageUri = built.imageUri;
        if (bundle) {
          const artifactPath = `artifacts/${d.id}/${r.id}.bundle`;
          await putObject(db, { objectPath: artifactPath, tenantId: d.tenant_id, deploymentId: d.id, bytes: bundle });
          await setRevisionStatus(db, r.id, "BUILDING", { artifactPath });
        }
        if (built.commitSha) {
          await setRevisionStatus(db, r.id, "BUILDING", { sourceRevisionConfig: { ...r.source_revision_config, repo_commit_sha: built.commitSha } });
        }
      }
      log("build", "build finished");
      stage = "deploy";
      await step("AWAITING_DEPLOY");
      await step("DEPLOYING");
      const revision = (await getRevision(db, d.id, r.id))!;
      const { url } = await compute.rollout({ deployment: d, revision, listener, bundle, imageUri, secrets: r.secrets, log, signal });
      if (signal.aborted) throw new Interrupted();
      await setRevisionStatus(db, r.id, "DEPLOYED", { message: null });
      await updateDeployment(db, d.id, { active_revision_id: r.id, url, status: "READY", status_message: null });
      log("deploy", `revision ${r.id} is live${url ? ` at ${url}` : ""}`);
    } catch (err) {
      if (err instanceof Interrupted || signal.aborted) {
        await setRevisionStatus(db, r.id, "INTERRUPTED", { message: "the rollout was interrupted" });
        return;
      }
      const reason = err instanceof Error ? err.message : String(err);
      const status: RevisionStatus = stage === "create" ? "CREATE_FAILED" : stage === "build" ? "BUILD_FAILED" : "DEPLOY_FAILED";
      await appendLog(db, r.id, stage === "deploy" ? "deploy" : "build", `${status}: ${reason}`);
      await setRevisionStatus(db, r.id, status, { message: reason });
      if (!(err instanceof BuildFailure) && stage !== "deploy" && stage !== "create") this.opts.onError?.(err);
    }
  }

  private async restore(d: DeploymentRow): Promise<void> {
    const db = this.opts.sql;
    const r = await getRevision(db, d.id, d.active_revision_id!);
    if (!r) return;
    const listener = await this.listenerOf(d);
    const compute = this.opts.computeFor(listener);
    if (!compute.restore) return;
    const artifact = r.artifact_path ? await getObject(db, r.artifact_path) : null;
    const log = (kind: "build" | "deploy", message: string) => void appendLog(db, r.id, kind, message).catch(() => {});
    const { url } = await compute.restore({
      deployment: d, revision: r, listener, bundle: artifact?.bytes ? new Uint8Array(artifact.bytes) : null,
      imageUri: r.source_revision_config.image_uri ?? null, secrets: r.secrets, log,
    });
    await updateDeployment(db, d.id, { url });
  }
}

class Interrupted extends Error {}
