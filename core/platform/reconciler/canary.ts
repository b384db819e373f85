/** A running canary's end on its compute and in the database: promoted, or stopped with a reason. */
import { agentcliError, CanaryPromoteFailed, type ComputeDriver } from "../../kernel/index.ts";
import type { SqlDriver } from "../../storage/index.ts";
import type { DeploymentRow, ListenerRow } from "../api/resources.ts";
import { endCanary, promoteCanary } from "../store/release.ts";

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
