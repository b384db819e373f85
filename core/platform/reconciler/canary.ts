/** A running canary's end on its compute and in the database: promoted, or stopped with a reason. */
import { agentcliError, CanaryPromoteFailed, type ComputeDriver } from "../../kernel/index.ts";
import type { SqlDriver } from "../../storage/index.ts";
import type { DeploymentRow, ListenerRow } from "../api/resources.ts";
import { endCanary, promoteCanary } from "../store/release.ts";
import { acquireLease, type LeaseTerms } from "../store/leases.ts";

export interface CanaryTarget {
  db: SqlDriver;
  compute: ComputeDriver;
  deployment: DeploymentRow;
  listener: ListenerRow | null;
}

/** Stops the canary (`reason` in its status message and log); the serving revision keeps its threads. */
export async function endRunningCanary(t: CanaryTarget, reason: string): Promise<void> {
  const revisionId = t.deployment.canary_revision_id;
  if (!revisionId) return;
  await t.compute.abortCanary?.(t.deployment, t.listener, revisionId);
  await endCanary(t.db, { deploymentId: t.deployment.id, revisionId, reason });
}

/** Switches all traffic to the canary: it becomes DEPLOYED and active, the previous revision superseded. */
export async function promoteRunningCanary(t: CanaryTarget): Promise<void> {
  const { deployment: d } = t;
  const revisionId = d.canary_revision_id!;
  try {
    await t.compute.promote!(d, t.listener, revisionId);
  } catch (err) {
    throw agentcliError(CanaryPromoteFailed, {
      name: d.name,
      reason: err instanceof Error ? err.message : String(err),
    });
  }
  await promoteCanary(t.db, { deploymentId: d.id, revisionId, url: d.url });
}

/** How long a promote or abort waits for a rollout or another replica holding the deployment. */
const BUSY_WAIT_MS = 10_000;

/**
 * Takes the deployment's reconcile lease for a promote or abort. The rollout that started the
 * canary holds it for a moment after the canary shows as running (it logs and lets go), and
 * another replica's poll may hold it briefly: wait for those (`running`: this replica's rollout
 * of it, if any), up to {@link BUSY_WAIT_MS}. False when it stayed busy (a new rollout is in progress).
 */
export async function leaseForCanary(
  db: SqlDriver,
  lease: LeaseTerms,
  running: () => Promise<void> | undefined,
): Promise<boolean> {
  const until = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    const busy = running();
    if (!busy && await acquireLease(db, lease)) return true;
    const left = until - Date.now();
    if (left <= 0) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const pause = new Promise<void>((r) => (timer = setTimeout(r, busy ? left : Math.min(100, left))));
    await (busy ? Promise.race([busy, pause]) : pause);
    clearTimeout(timer);
  }
}
