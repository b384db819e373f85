/**
 * The `k8s` listener's compute: renders a deployment's manifests from its `resource_spec`
 * and applies them through the Kubernetes API with the listener's kubeconfig.
 */
import type { ComputeDriver, RolloutRequest } from "./compute.ts";
import type { DeploymentRow, ListenerRow } from "./resources.ts";

export class K8sCompute implements ComputeDriver {
  readonly kind = "k8s";
  async provision(_d: DeploymentRow, _l: ListenerRow | null): Promise<void> {}
  async rollout(_req: RolloutRequest): Promise<{ url: string | null }> {
    throw new Error("k8s rollouts are not available yet");
  }
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
}
