/**
 * The `k8s` compute: renders a revision's manifests from the deployment's `resource_spec` and
 * applies them through the Kubernetes API with the listener's kubeconfig (`agentcli platform
 * admin set-kubeconfig`; the control plane's client, `ComputeContext.kube`), then waits for the
 * API server Deployment to roll out (Kubernetes keeps the old pods serving until the new ones
 * are ready: `maxUnavailable: 0`).
 */
import {
  agentcliError,
  type ComputeContext,
  type ComputeDeployment,
  type ComputeDriver,
  type ComputeListener,
  ControlPlaneNoPublicUrl,
  definePlugin,
  K8sDeploymentNoListener,
  type KubeApi,
  KubernetesPackagesUnsupported,
  ListenerNoKubeconfig,
  type RolloutRequest,
  VERSION,
} from "../../core/index.ts";
import { appName, renderManifests } from "./k8s-manifests.ts";

/** The image that runs agentcli bundles on a cluster. */
export const RUNTIME_IMAGE = `ghcr.io/agentcli/agentcli:${VERSION}`;

export class K8sCompute implements ComputeDriver {
  readonly kind = "k8s";
  private readonly opts: ComputeContext;

  constructor(opts: ComputeContext) {
    this.opts = opts;
  }

  private client(listener: ComputeListener | null): KubeApi {
    if (!listener) throw agentcliError(K8sDeploymentNoListener);
    if (!listener.kubeconfig) {
      throw agentcliError(ListenerNoKubeconfig, { computeId: listener.compute_id, listener: listener.id });
    }
    return this.opts.kube(listener.kubeconfig);
  }

  private namespace(d: ComputeDeployment, listener: ComputeListener | null): string {
    const declared = (listener?.compute_config.k8s_namespaces as string[] | undefined) ?? [];
    return d.source_config.listener_config?.k8s_namespace ?? declared[0] ?? "default";
  }

  async provision(): Promise<void> {}

  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    if (req.packages) throw agentcliError(KubernetesPackagesUnsupported);
    const kube = this.client(req.listener);
    const namespace = this.namespace(req.deployment, req.listener);
    let image = req.imageUri;
    let bundle: { url: string; token: string } | null = null;
    if (!image) {
      bundle = this.opts.bundleAccess(req.deployment.id, req.revision.id);
      if (!bundle) {
        throw agentcliError(ControlPlaneNoPublicUrl);
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
    await kube.waitForRollout(namespace, `${app}-api`, { signal: req.signal });
    return { url: req.deployment.source_config.custom_url ?? `http://${app}.${namespace}.svc.cluster.local` };
  }

  async teardown(d: ComputeDeployment, listener: ComputeListener | null): Promise<void> {
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

export default definePlugin({
  name: "compute-k8s",
  kind: "compute",
  description: "Runs the control plane's revisions on a Kubernetes cluster (a k8s listener and its kubeconfig).",
  compute: { type: "k8s" },
  hooks: { "compute:driver": (ctx) => new K8sCompute(ctx) },
});
