/**
 * The `k8s` listener's compute: renders a revision's manifests from the deployment's
 * `resource_spec` and applies them through the Kubernetes API with the listener's
 * kubeconfig (`agentcli platform admin set-kubeconfig`), then waits for the API server
 * Deployment to roll out (Kubernetes keeps the old pods serving until the new ones are
 * ready: `maxUnavailable: 0`).
 */
import { VERSION } from "../../kernel/index.ts";
import type { ComputeDriver, RolloutRequest } from "./contract.ts";
import { KubeClient } from "./k8s-client.ts";
import { appName, renderManifests } from "./k8s-manifests.ts";
import type { DeploymentRow, ListenerRow } from "../api/resources.ts";

/** The image that runs agentcli bundles on a cluster. */
export const RUNTIME_IMAGE = `ghcr.io/agentcli/agentcli:${VERSION}`;

export interface K8sComputeOptions {
  /** Where the cluster downloads a revision's bundle, and the token it sends (null: no public address). */
  bundleAccess?: (deploymentId: string, revisionId: string) => { url: string; token: string } | null;
  waitAttempts?: number;
  waitIntervalMs?: number;
}

export class K8sCompute implements ComputeDriver {
  readonly kind = "k8s";
  private readonly opts: K8sComputeOptions;

  constructor(opts: K8sComputeOptions = {}) {
    this.opts = opts;
  }

  private client(listener: ListenerRow | null): KubeClient {
    if (!listener) throw new Error("a k8s deployment needs source_config.listener_id");
    if (!listener.kubeconfig) {
      throw new Error(
        `listener "${listener.compute_id}" has no kubeconfig; run "agentcli platform admin set-kubeconfig --listener ${listener.id} --kubeconfig <file>"`,
      );
    }
    return KubeClient.fromKubeconfig(listener.kubeconfig);
  }

  private namespace(d: DeploymentRow, listener: ListenerRow | null): string {
    const declared = (listener?.compute_config.k8s_namespaces as string[] | undefined) ?? [];
    return d.source_config.listener_config?.k8s_namespace ?? declared[0] ?? "default";
  }

  async provision(): Promise<void> {}

  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    const kube = this.client(req.listener);
    const namespace = this.namespace(req.deployment, req.listener);
    let image = req.imageUri;
    let bundle: { url: string; token: string } | null = null;
    if (!image) {
      bundle = this.opts.bundleAccess?.(req.deployment.id, req.revision.id) ?? null;
      if (!bundle) {
        throw new Error(
          "this control plane has no public address for the cluster to fetch the bundle from; start it with --public-url <address the cluster reaches>",
        );
      }
      image = RUNTIME_IMAGE;
    }
    const objects = renderManifests({
      deployment: {
        id: req.deployment.id,
        name: req.deployment.name,
        resource_spec: req.deployment.source_config.resource_spec,
      },
      revisionId: req.revision.id,
      namespace,
      image,
      bundle,
      secrets: req.secrets,
      secretReferences: req.deployment.secret_references,
    });
    await kube.apply(objects, (m) => req.log("deploy", m));
    const app = appName(req.deployment);
    req.log("deploy", `waiting for Deployment ${namespace}/${app}-api to roll out`);
    await kube.waitForRollout(namespace, `${app}-api`, {
      signal: req.signal,
      attempts: this.opts.waitAttempts,
      intervalMs: this.opts.waitIntervalMs,
    });
    return { url: req.deployment.source_config.custom_url ?? `http://${app}.${namespace}.svc.cluster.local` };
  }

  async teardown(d: DeploymentRow, listener: ListenerRow | null): Promise<void> {
    if (!listener?.kubeconfig) return;
    const kube = this.client(listener);
    const objects = renderManifests({
      deployment: { id: d.id, name: d.name, resource_spec: d.source_config.resource_spec },
      revisionId: "teardown",
      namespace: this.namespace(d, listener),
      image: "none",
      secrets: [],
      // Renders the bundle's Secret too, so it is removed as well (absent ones are fine).
      bundle: { url: "http://teardown.invalid", token: "teardown" },
    });
    await kube.remove(objects);
  }

  async close(): Promise<void> {}
}
