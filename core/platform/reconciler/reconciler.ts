/**
 * Drives revisions through their states, one rollout at a time per deployment:
 *
 *   CREATING -> QUEUED -> AWAITING_BUILD -> BUILDING -> AWAITING_DEPLOY -> DEPLOYING -> DEPLOYED
 *
 * with CREATE_FAILED / BUILD_FAILED / DEPLOY_FAILED (reason in `status_message`, details in the
 * logs), SKIPPED when a newer revision arrives before this one is built, and INTERRUPTED when
 * the deployment is deleted or the control plane stops mid-rollout, or (after DEPLOYED) when a
 * newer revision replaces it: one revision per deployment is DEPLOYED, the one that serves.
 * `active_revision_id` switches only once the compute reports the new revision healthy.
 * Deployments: AWAITING_DATABASE until storage is provisioned, then READY; AWAITING_DELETE
 * during teardown, after which the row is gone.
 *
 * Several control-plane replicas may share one PostgreSQL: a replica works on a deployment
 * only while it holds the deployment's lease (`leases.ts`), so two replicas never roll out the
 * same revision; each polls for work, so a change made through one replica is carried out by
 * whichever holds the lease, and a rollout left behind by a replica that died is marked
 * INTERRUPTED once its lease expires. One rollout: ./rollout.ts.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import process from "node:process";
import type { AtRestEncryption, SqlDriver } from "../../storage/index.ts";
import { packagesClaim } from "../store/revision-packages.ts";
import { openSecrets } from "../store/secrets-at-rest.ts";
import type { ProjectBuilders } from "./build.ts";
import {
  agentcliError,
  CanaryNotRunning,
  type ComputeDriver,
  DeploymentBusy,
  type PluginDriver,
} from "../../kernel/index.ts";
import type { DeploymentRow, ListenerRow } from "../api/resources.ts";
import type { RevisionStatus } from "../api/schema.ts";
import { deleteDeploymentRow, getDeploymentById, servingDeployments, updateDeployment } from "../store/deployments.ts";
import { getObject } from "../store/objects.ts";
import { appendLog, getRevision, revisionsInStatus, revisionsOf, setRevisionStatus } from "../store/revisions.ts";
import { getListener } from "../store/tenancy.ts";
import { acquireLease, clearLeases, deploymentsNeedingWork, releaseLease, renewLease } from "../store/leases.ts";
import { packagesDir, rollout } from "./rollout.ts";
import { type PackagesSweepSettings, packagesSweepSettings, sweepPackages } from "./packages-sweep.ts";
import { withGateCredential } from "./gates.ts";
import { installPackages, packageSource } from "./packages.ts";
import { endRunningCanary, leaseForCanary, promoteRunningCanary } from "./canary.ts";
import { endCanary } from "../store/release.ts";

export interface ReconcilerOptions {
  sql: SqlDriver;
  /** Opens the stored secrets handed to a rollout (../store/secrets-at-rest.ts). */
  encryption: AtRestEncryption;
  dataDir: string;
  /** The compute for a listener (null: the built-in local listener). */
  computeFor: (listener: ListenerRow | null) => ComputeDriver;
  builders: ProjectBuilders;
  /** The plugins (the rubric grader of eval gates builds its model with them). */
  driver?: PluginDriver;
  onError?: (err: unknown) => void;
  /** Other replicas may share the database (PostgreSQL); false for the embedded, single-process one. */
  shared?: boolean;
  /** How long a lease lasts without renewal (default 15 s; renewed every third of it). */
  leaseMs?: number;
  /** How often to look for work another replica queued (default 1 s). */
  pollMs?: number;
  /**
   * Variables the control plane gives every revision of a deployment beyond its secrets
   * (overriding a secret of the same name): its own address and the deployment's sandbox key.
   */
  platformEnv?: (d: DeploymentRow, listener: ListenerRow | null) => Promise<Array<{ name: string; value: string }>>;
  /** Called once a deployment's compute is torn down, before its row is deleted. */
  onTeardown?: (d: DeploymentRow) => Promise<void>;
  /** The sweep of unused npm package installs (./packages-sweep.ts; default: its defaults). */
  packagesSweep?: PackagesSweepSettings;
  /** How often polling sweeps them (default 10 min; 0: never, for tests that call `sweepPackages()`). */
  packagesSweepMs?: number;
  /** A line of what the reconciler did on its own (a sweep's removal). */
  log?: (line: string) => void;
}

const IN_FLIGHT: RevisionStatus[] = ["AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"];

interface Run {
  dirty: boolean;
  abort: AbortController;
  done: Promise<void>;
}

export class Reconciler {
  private readonly opts: ReconcilerOptions;
  private readonly running = new Map<string, Run>();
  private closed = false;
  private poller: ReturnType<typeof setInterval> | null = null;
  private polling = false;
  /** The running sweep of package installs, and when the last one started. */
  private sweeping: Promise<string[]> | null = null;
  private sweptAt = 0;
  /** This replica's name in the lease table. */
  readonly replicaId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(opts: ReconcilerOptions) {
    this.opts = opts;
  }

  private get leaseMs(): number {
    return this.opts.leaseMs ?? 15_000;
  }

  /** Runs active revisions again (this replica's computes), then takes up queued or orphaned work and keeps polling for more. */
  async start(): Promise<void> {
    const db = this.opts.sql;
    if (!this.opts.shared) await clearLeases(db);
    for (const d of await servingDeployments(db)) await this.restore(d).catch((err) => this.opts.onError?.(err));
    await this.poll();
    this.poller = setInterval(() => void this.poll(), this.opts.pollMs ?? 1000);
    (this.poller as { unref?: () => void }).unref?.();
  }

  /** Kicks every deployment with work whose lease is free. */
  private async poll(): Promise<void> {
    if (this.closed || this.polling) return;
    this.polling = true;
    try {
      for (
        const id of await deploymentsNeedingWork(this.opts.sql, this.replicaId, ["CREATING", "QUEUED", ...IN_FLIGHT])
      ) {
        if (!this.running.has(id)) this.kick(id);
      }
    } catch (err) {
      if (!this.closed) this.opts.onError?.(err);
    } finally {
      this.polling = false;
    }
    const every = this.opts.packagesSweepMs ?? 600_000;
    if (every > 0 && !this.sweeping && Date.now() - this.sweptAt >= every) void this.sweepPackages();
  }

  /** Removes the npm package installs no kept revision uses (./packages-sweep.ts); the keys removed. */
  sweepPackages(): Promise<string[]> {
    if (this.sweeping) return this.sweeping;
    this.sweptAt = Date.now();
    const onError = (err: unknown) => {
      if (!this.closed) this.opts.onError?.(err);
    };
    const sweep = sweepPackages({
      db: this.opts.sql,
      dir: packagesDir(this.opts.dataDir),
      settings: this.opts.packagesSweep ?? packagesSweepSettings({}),
      log: this.opts.log ?? (() => {}),
      onError,
    }).catch((err) => {
      onError(err);
      return [];
    }).finally(() => (this.sweeping = null));
    this.sweeping = sweep;
    return sweep;
  }

  /** Tells the reconciler a deployment changed; work runs in the background. */
  notify(deploymentId: string): void {
    this.kick(deploymentId);
  }

  /** Resolves once the deployment has no rollout running on this replica (tests and shutdown). */
  async idle(deploymentId: string): Promise<void> {
    while (this.running.has(deploymentId)) await this.running.get(deploymentId)!.done;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    for (const r of this.running.values()) r.abort.abort();
    await Promise.allSettled([...[...this.running.values()].map((r) => r.done), this.sweeping]);
  }

  private kick(deploymentId: string): void {
    if (this.closed) return;
    const current = this.running.get(deploymentId);
    if (current) {
      current.dirty = true;
      return;
    }
    const db = this.opts.sql;
    const run: Run = { dirty: true, abort: new AbortController(), done: Promise.resolve() };
    run.done = (async () => {
      try {
        while (run.dirty && !this.closed) {
          run.dirty = false;
          run.abort = new AbortController();
          // Another replica holds it: it carries the change out, or polling brings it back here once the lease is free.
          if (!(await acquireLease(db, { deploymentId, holder: this.replicaId, ttlMs: this.leaseMs }))) return;
          const heartbeat = setInterval(
            () => void this.renew(deploymentId, run),
            Math.max(50, Math.floor(this.leaseMs / 3)),
          );
          try {
            await this.reconcile(deploymentId, run.abort.signal);
          } catch (err) {
            this.opts.onError?.(err);
          } finally {
            clearInterval(heartbeat);
            await releaseLease(db, deploymentId, this.replicaId).catch((err) => this.opts.onError?.(err));
          }
        }
      } catch (err) {
        if (!this.closed) this.opts.onError?.(err);
      } finally {
        this.running.delete(deploymentId);
      }
    })();
    this.running.set(deploymentId, run);
  }

  /** Extends the lease while working; stops the rollout when the lease was lost or the deployment is being deleted. */
  private async renew(deploymentId: string, run: Run): Promise<void> {
    try {
      const status = await renewLease(this.opts.sql, { deploymentId, holder: this.replicaId, ttlMs: this.leaseMs });
      if (status === null) {
        this.opts.onError?.(
          new Error(
            `lost the reconcile lease of deployment ${deploymentId} to another replica; stopping its rollout here`,
          ),
        );
        run.abort.abort();
      } else if (status === "AWAITING_DELETE" && !run.abort.signal.aborted) {
        run.dirty = true;
        run.abort.abort();
      }
    } catch (err) {
      if (!this.closed) this.opts.onError?.(err);
    }
  }

  /** Aborts the running rollout of a deployment (delete). */
  interrupt(deploymentId: string): void {
    this.running.get(deploymentId)?.abort.abort();
  }

  private async listenerOf(d: DeploymentRow): Promise<ListenerRow | null> {
    return d.source_config.listener_id
      ? await getListener(this.opts.sql, d.tenant_id, d.source_config.listener_id)
      : null;
  }

  private async reconcile(deploymentId: string, signal: AbortSignal): Promise<void> {
    const db = this.opts.sql;
    const d = await getDeploymentById(db, deploymentId);
    if (!d) return;
    const listener = await this.listenerOf(d);
    const compute = this.opts.computeFor(listener);
    if (d.status === "AWAITING_DELETE") {
      for (const r of await revisionsInStatus(db, ["CREATING", "QUEUED", ...IN_FLIGHT])) {
        if (r.deployment_id === d.id) {
          await setRevisionStatus(db, r.id, { status: "INTERRUPTED", message: "the deployment was deleted" });
        }
      }
      await compute.teardown(d, listener);
      await this.opts.onTeardown?.(d);
      await deleteDeploymentRow(db, d.id);
      return;
    }
    // This replica holds the lease and runs no rollout of it: any revision in flight was left by a replica that stopped
    // (a running canary is not in flight: it waits for promote or abort).
    for (const r of await revisionsOf(db, d.id, IN_FLIGHT)) {
      if (r.id === d.canary_revision_id) continue;
      await setRevisionStatus(db, r.id, {
        status: "INTERRUPTED",
        from: IN_FLIGHT,
        message: "the control plane stopped during this rollout; deploy again",
      });
      await appendLog(db, {
        revisionId: r.id,
        kind: "deploy",
        message: "INTERRUPTED: the control plane (replica) running this rollout stopped",
      });
    }
    if (d.status === "AWAITING_DATABASE") {
      await compute.provision(d, listener, () => {});
      await updateDeployment(db, d.id, { status: "READY" });
    }
    const pending = await revisionsOf(db, d.id, ["CREATING", "QUEUED"]);
    if (!pending.length) return;
    const [newest, ...older] = pending;
    if (d.canary_revision_id) {
      await endRunningCanary(
        { db, compute, deployment: d, listener },
        `superseded by revision ${newest!.id} before it was promoted`,
      );
    }
    for (const r of older) {
      await setRevisionStatus(db, r.id, {
        status: "SKIPPED",
        from: ["CREATING", "QUEUED"],
        message: `superseded by revision ${newest!.id} before it was built`,
      });
    }
    await rollout({ settings: this.opts, deployment: d, revision: newest!, listener, compute, signal });
  }

  /**
   * Promote (`promote`: the canary takes all traffic, DEPLOYED) or abort (INTERRUPTED, its
   * threads back on the serving revision) the deployment's canary, holding its lease.
   */
  async endCanary(d: DeploymentRow, action: "promote" | "abort"): Promise<void> {
    const db = this.opts.sql;
    if (!d.canary_revision_id) throw agentcliError(CanaryNotRunning, { action, name: d.name });
    const lease = { deploymentId: d.id, holder: this.replicaId, ttlMs: this.leaseMs };
    const busy = () => this.running.get(d.id)?.done;
    if (!(await leaseForCanary(db, lease, busy))) throw agentcliError(DeploymentBusy, { action, name: d.name });
    try {
      // What the rollout that held the lease left: its canary, or none any more.
      d = (await getDeploymentById(db, d.id)) ?? d;
      if (!d.canary_revision_id) throw agentcliError(CanaryNotRunning, { action, name: d.name });
      const listener = await this.listenerOf(d);
      const compute = this.opts.computeFor(listener);
      const target = { db, compute, deployment: d, listener };
      if (action === "abort") return await endRunningCanary(target, "the canary was aborted");
      await promoteRunningCanary(target);
    } finally {
      await releaseLease(db, d.id, this.replicaId).catch((err) => this.opts.onError?.(err));
    }
  }

  private async restore(d: DeploymentRow): Promise<void> {
    const db = this.opts.sql;
    const listener = await this.listenerOf(d);
    const compute = this.opts.computeFor(listener);
    if (d.canary_revision_id && !this.opts.shared) {
      // Its process did not survive the restart: the serving revision takes its threads back
      // (a compute whose canary did survive, a cluster's router, removes it).
      await compute.abortCanary?.(d, listener, d.canary_revision_id).catch((err) => this.opts.onError?.(err));
      await endCanary(db, {
        deploymentId: d.id,
        revisionId: d.canary_revision_id,
        reason: "the control plane restarted during the canary",
      });
      d.canary_revision_id = null;
    }
    if (!compute.restore) return;
    const restored = await this.restoreRevision({ d, listener, compute, revisionId: d.active_revision_id! });
    if (restored) await updateDeployment(db, d.id, { url: restored.url });
    if (!restored || !d.canary_revision_id) return;
    // The canary runs again beside it; its threads (in the store) stay on it.
    const canary = d.canary_revision_id;
    await this.restoreRevision({ d, listener, compute, revisionId: canary, canaryPercent: d.canary_percent })
      .catch(async (err) => {
        const reason = err instanceof Error ? err.message : String(err);
        await endRunningCanary(
          { db, compute, deployment: d, listener },
          `the canary did not start again after the control plane restarted: ${reason}`,
        );
      });
  }

  /** Runs a stored revision again on its compute (the active one, or the running canary). */
  private async restoreRevision(
    o: {
      d: DeploymentRow;
      listener: ListenerRow | null;
      compute: ComputeDriver;
      revisionId: string;
      canaryPercent?: number | null;
    },
  ): Promise<{ url: string | null } | null> {
    const db = this.opts.sql;
    const { d, listener } = o;
    const r = await getRevision(db, d.id, o.revisionId);
    if (!r) return null;
    const artifact = r.artifact_path ? await getObject(db, r.artifact_path) : null;
    const log = (kind: "build" | "deploy", message: string) =>
      void appendLog(db, { revisionId: r.id, kind, message }).catch(() => {});
    const bundle = artifact?.bytes ? new Uint8Array(artifact.bytes) : null;
    // Installed by its build; installed again (the same way) when the folder is gone.
    const packages = bundle
      ? await installPackages(await packageSource(bundle), {
        cacheDir: packagesDir(this.opts.dataDir),
        log: (m) => log("build", m),
        claim: packagesClaim(db, r.id),
        // For the \`\${VAR}\` of the project's .npmrc / .yarnrc.yml: the deployment's secrets, never logged.
        env: Object.fromEntries(openSecrets(this.opts.encryption, r.secrets).map((s) => [s.name, s.value])),
      })
      : null;
    return await o.compute.restore!({
      deployment: d,
      revision: r,
      listener,
      bundle,
      packages,
      imageUri: r.source_revision_config.image_uri ?? null,
      // A restored revision is past its gates: no gate credential (a hand-set one is dropped).
      secrets: withGateCredential(
        [...openSecrets(this.opts.encryption, r.secrets), ...(await this.opts.platformEnv?.(d, listener) ?? [])],
        false,
      ).secrets,
      log,
      ...(o.canaryPercent ? { canaryPercent: o.canaryPercent } : {}),
    });
  }
}
