/**
 * What the reconciler asks of the compute that runs revisions (a listener): provision a
 * deployment's storage, roll a revision out (resolving only once it is healthy, while the
 * previous revision keeps serving), and tear a deployment down. Two implementations: the
 * local listener (child processes on this machine) and `k8s` (manifests applied to a cluster).
 */
import type { DeploymentRow, ListenerRow, RevisionRow } from "../api/resources.ts";

export type RevisionLog = (kind: "build" | "deploy", message: string) => void;

export interface RolloutRequest {
  deployment: DeploymentRow;
  revision: RevisionRow;
  listener: ListenerRow | null;
  /** The built bundle (sources that build one), or null for container images. */
  bundle: Uint8Array | null;
  imageUri: string | null;
  secrets: Array<{ name: string; value: string }>;
  log: RevisionLog;
  signal: AbortSignal;
}

export interface ComputeDriver {
  readonly kind: string;
  /** Creates the deployment's storage (database, data folder); idempotent. */
  provision(deployment: DeploymentRow, listener: ListenerRow | null, log: (message: string) => void): Promise<void>;
  /** Runs the revision and switches traffic to it once healthy; throws (with a readable reason) when it cannot. */
  rollout(req: RolloutRequest): Promise<{ url: string | null }>;
  /** Stops everything of the deployment and deletes its storage. */
  teardown(deployment: DeploymentRow, listener: ListenerRow | null): Promise<void>;
  /** After a control-plane restart: runs the active revision again; null when this replica never ran the deployment. */
  restore?(req: Omit<RolloutRequest, "signal">): Promise<{ url: string | null } | null>;
  close(): Promise<void>;
}
