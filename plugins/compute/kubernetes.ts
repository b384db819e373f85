/**
 * The `k8s` compute: renders a revision's manifests from the deployment's `resource_spec` and
 * applies them through the Kubernetes API with the listener's kubeconfig (`agentcli platform
 * admin set-kubeconfig`; the control plane's client, `ComputeContext.kube`), then waits for the
 * API server Deployment to roll out (Kubernetes keeps the old pods serving until the new ones
 * are ready: `maxUnavailable: 0`).
 *
 * A revision with gates (issue 37) first runs as a candidate beside the serving pods
 * (./k8s-candidate.ts); the gates check it through the API server's service proxy
 * (`KubeApi.serviceProxy`), and only once they pass are the deployment's own manifests applied
 * with it (the candidate is removed either way). A canary runs the revision beside the serving
 * pods behind a router (./k8s-canary.ts) until it is promoted or aborted; promote applies the
 * revision's manifests, rendered at the rollout or again when the control plane restarts
 * (`restore`, which applies nothing: the cluster kept running).
 */
import {
  agentcliError,
  type ComputeContext,
  type ComputeDeployment,
  type ComputeDriver,
  type ComputeListener,
  ControlPlaneNoPublicUrl,
  definePlugin,
  GATE_TOKEN_ENV,
  K8sDeploymentNoListener,
  type KubeApi,
  KubernetesPackagesUnsupported,
  ListenerNoKubeconfig,
  type RolloutRequest,
  VERSION,
} from "../../core/index.ts";
import { appName, type RenderInput, renderManifests } from "./k8s-manifests.ts";
import { renderCandidate } from "./k8s-candidate.ts";
import { renderCanary } from "./k8s-canary.ts";

/** The image that runs agentcli bundles on a cluster. */
export const RUNTIME_IMAGE = `ghcr.io/agentcli/agentcli:${VERSION}`;

export class K8sCompute implements ComputeDriver {
  readonly kind = "k8s";
  readonly releases = { gates: true, canary: true };
  /** Running canaries by deployment: what promote applies to the deployment's own Deployments. */
  private readonly canaries = new Map<string, RenderInput>();
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

  /** What the revision renders from (`input`; `serving`: without the gate credential) and the deployment's URL. */
  private render(req: Omit<RolloutRequest, "signal">): { input: RenderInput; serving: RenderInput; url: string } {
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
    const input: RenderInput = {
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
    };
    // The gate credential is the candidate's alone: the serving pods' Secret never holds it.
    const serving = { ...input, secrets: input.secrets.filter((s) => s.name !== GATE_TOKEN_ENV) };
    const url = req.deployment.source_config.custom_url ??
      `http://${appName(req.deployment)}.${namespace}.svc.cluster.local`;
    return { input, serving, url };
  }

  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    if (req.packages) throw agentcliError(KubernetesPackagesUnsupported);
    const kube = this.client(req.listener);
    const { input, serving, url } = this.render(req);
    const namespace = input.namespace;
    if (req.gate) await this.check(kube, req, input);
    if (req.canaryPercent) {
      await this.startCanary(kube, req, { input: serving, percent: req.canaryPercent });
      return { url };
    }
    await kube.apply(renderManifests(serving), (m) => req.log("deploy", m));
    const app = appName(req.deployment);
    req.log("deploy", `waiting for Deployment ${namespace}/${app}-api to roll out`);
    await kube.waitForRollout(namespace, `${app}-api`, { signal: req.signal });
    return { url };
  }

  /** Runs the revision as a canary behind the router, which then takes the deployment's Service. */
  private async startCanary(
    kube: KubeApi,
    req: RolloutRequest,
    { input, percent }: { input: RenderInput; percent: number },
  ): Promise<void> {
    const canary = renderCanary(input, { percent, routerImage: RUNTIME_IMAGE });
    const log = (m: string) => req.log("deploy", m);
    log(`starting revision ${req.revision.id} as ${input.namespace}/${canary.name} behind the router ${canary.router}`);
    await kube.apply(canary.objects, log);
    await kube.waitForRollout(input.namespace, canary.name, { signal: req.signal });
    await kube.waitForRollout(input.namespace, canary.router, { signal: req.signal });
    // Only once the router runs does the deployment's Service select it.
    await kube.apply([canary.front], log);
    this.canaries.set(req.deployment.id, input);
    log(`canary: ${percent}% of new threads go to revision ${req.revision.id}`);
  }

  /**
   * After a control-plane restart: the cluster kept running what it ran (nothing is applied);
   * a running canary's manifests are rendered again, so promote can apply them.
   */
  async restore(req: Omit<RolloutRequest, "signal">): Promise<{ url: string | null } | null> {
    let rendered: ReturnType<K8sCompute["render"]>;
    try {
      rendered = this.render(req);
    } catch {
      // No public URL any more: what runs keeps running; a canary can then only be aborted.
      return null;
    }
    const { serving, url } = rendered;
    if (req.canaryPercent) this.canaries.set(req.deployment.id, serving);
    return { url };
  }

  async promote(d: ComputeDeployment, listener: ComputeListener | null, revisionId: string): Promise<void> {
    const input = this.canaries.get(d.id);
    if (input?.revisionId !== revisionId) {
      throw new Error(
        `revision ${revisionId} is not this deployment's running canary on this control plane: abort the canary and deploy the revision again`,
      );
    }
    const kube = this.client(listener);
    const canary = renderCanary(input, { percent: 1, routerImage: RUNTIME_IMAGE });
    const app = appName(d);
    // The deployment's own Deployments take the revision (the router still in front), then its Service selects them again.
    await kube.apply(renderManifests(input).filter((o) => !isService(o, canary.service)));
    await kube.waitForRollout(input.namespace, `${app}-api`);
    await kube.apply([canary.service]);
    await kube.remove(canary.own);
    this.canaries.delete(d.id);
  }

  async abortCanary(d: ComputeDeployment, listener: ComputeListener | null, revisionId: string): Promise<void> {
    this.canaries.delete(d.id);
    if (!listener?.kubeconfig) return;
    const canary = renderCanary(placeholder(d, this.namespace(d, listener), revisionId), {
      percent: 1,
      routerImage: RUNTIME_IMAGE,
    });
    const kube = this.client(listener);
    await kube.apply([canary.service]);
    await kube.remove(canary.own);
  }

  /**
   * Runs the revision as a candidate beside the serving pods and checks it through the API
   * server's service proxy; throws the gate's reason. The candidate is removed either way.
   */
  private async check(kube: KubeApi, req: RolloutRequest, input: RenderInput): Promise<void> {
    const candidate = renderCandidate(input);
    const log = (m: string) => req.log("deploy", m);
    log(
      `starting revision ${req.revision.id} as ${input.namespace}/${candidate.name} to check it before it takes traffic`,
    );
    try {
      await kube.apply(candidate.objects, log);
      await kube.waitForRollout(input.namespace, candidate.name, { signal: req.signal });
      const proxy = await kube.serviceProxy({ namespace: input.namespace, service: candidate.name, port: "http" });
      try {
        await req.gate!(proxy.url);
      } finally {
        await proxy.close();
      }
    } finally {
      await kube.remove(candidate.own).catch((err) => log(`could not remove the candidate: ${err.message ?? err}`));
    }
    log(`revision ${req.revision.id} passed its checks; rolling it out`);
  }

  async teardown(d: ComputeDeployment, listener: ComputeListener | null): Promise<void> {
    if (!listener?.kubeconfig) return;
    const kube = this.client(listener);
    const input = placeholder(d, this.namespace(d, listener), "teardown");
    // A candidate left by a control plane that stopped mid-check goes too.
    const canary = renderCanary(input, { percent: 1, routerImage: RUNTIME_IMAGE }).own;
    await kube.remove([...renderManifests(input), ...renderCandidate(input).own, ...canary]);
  }

  async close(): Promise<void> {}
}

/** The objects of a deployment with nothing of a revision in them: what teardown and abort name to remove. */
function placeholder(d: ComputeDeployment, namespace: string, revisionId: string): RenderInput {
  return {
    deployment: { id: d.id, name: d.name, resource_spec: d.source_config.resource_spec },
    revisionId,
    namespace,
    image: "none",
    secrets: [],
    // Renders the bundle's Secret too, so it is removed as well (absent ones are fine).
    bundle: { url: "http://teardown.invalid", token: "teardown" },
  };
}

const isService = (o: { kind: string; metadata: { name: string } }, s: { metadata: { name: string } }) =>
  o.kind === "Service" && o.metadata.name === s.metadata.name;

export default definePlugin({
  name: "compute-k8s",
  kind: "compute",
  description: "Runs the control plane's revisions on a Kubernetes cluster (a k8s listener and its kubeconfig).",
  compute: { type: "k8s" },
  hooks: { "compute:driver": (ctx) => new K8sCompute(ctx) },
});
