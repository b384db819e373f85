/**
 * Kubernetes manifests of one deployment revision, from its `resource_spec` (spec 2.10):
 * API server and queue worker Deployments (scales, cpu/memory requests and limits, pod
 * labels, annotations, service account, pull secrets, volumes, mounts, init containers,
 * sidecars: ./k8s-workloads.ts), a Service, HorizontalPodAutoscalers from min/max scales, a
 * PostgreSQL StatefulSet and a Redis Deployment sized by the `db_*` / `redis_*` fields
 * (./k8s-stores.ts), and the Secret of the deployment's secrets. For a bundle (not an image),
 * an init container downloads the revision's bundle from the control plane into a shared
 * volume and the server runs `agentcli serve` on it. Plain objects, ready for the Kubernetes API.
 *
 * @example
 * const objects = renderManifests({ deployment, revisionId, namespace: "agents", image: "registry/agent:1", secrets });
 */
import { createHash } from "node:crypto";
import {
  type ComputeResourceSpec,
  CREATE_ONLY,
  type K8sObject,
  MAX_CONNECTIONS_PER_CLIENT_VARIABLE,
} from "../../core/index.ts";
import { agentWorkloads, type PodParts } from "./k8s-workloads.ts";
import { cache, database } from "./k8s-stores.ts";

export interface RenderInput {
  deployment: { id: string; name: string; resource_spec?: ComputeResourceSpec | null };
  revisionId: string;
  namespace: string;
  /** The container image: a revision's `image_uri`, or the agentcli runtime for bundles. */
  image: string;
  /**
   * For bundles: where an init container downloads the revision's bundle from, and the
   * deployment's bundle token it authenticates with (kept in a Secret, never in the pod spec).
   */
  bundle?: { url: string; token: string } | null;
  secrets: Array<{ name: string; value: string }>;
  secretReferences?: Array<{ name: string; secret_name: string; secret_key: string }> | null;
}

/** What every part of one revision's manifests shares. */
export interface Render {
  input: RenderInput;
  spec: ComputeResourceSpec;
  /** The objects' base name ({@link appName}). */
  app: string;
  /** The labels of every object. */
  base: Record<string, string>;
  meta(name: string, component: string, extra?: { annotations?: Record<string, string> }): K8sObject["metadata"];
}

export const API_PORT = 8000;
const BUNDLE_DIR = "/bundle";
const BUNDLE_PATH = `${BUNDLE_DIR}/bundle.tgz`;
/** The init container that downloads a revision's bundle (a small image with `sh` and `curl`). */
export const FETCH_IMAGE = "curlimages/curl:8.11.1";
/**
 * What the init container runs (from its env: URL, token, path): download the bundle with the
 * deployment's bundle token, retrying while the control plane is unreachable.
 */
export const FETCH_SCRIPT =
  'curl -fsS --retry 10 --retry-all-errors --retry-delay 2 -H "Authorization: Bearer $AGENTCLI_BUNDLE_TOKEN" -o "$AGENTCLI_BUNDLE_PATH" "$AGENTCLI_BUNDLE_URL"';

/** A DNS-1123 name from the deployment's name and id (stable, at most 40 characters so suffixes fit). */
export function appName(d: { id: string; name: string }): string {
  const slug = d.name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 28) || "agent";
  return `${slug}-${d.id.replace(/-/g, "").slice(0, 8)}`.replace(/^-/, "a-");
}

const cpu = (cores: number | undefined) => (cores === undefined ? undefined : `${Math.round(cores * 1000)}m`);
const mem = (mb: number | undefined) => (mb === undefined ? undefined : `${Math.round(mb)}Mi`);

/** Which pods a `resource_spec` field prefix sizes: the API server (no prefix), queue workers, the database, the cache. */
export type Tier = "" | "queue_" | "db_" | "redis_";

/** A container's `resources` from the tier's `<tier>cpu`, `cpu_limit`, `memory_mb`, `memory_limit_mb`. */
export function resources(spec: ComputeResourceSpec, tier: Tier): Record<string, unknown> {
  const requests = prune({ cpu: cpu(spec[`${tier}cpu`]), memory: mem(spec[`${tier}memory_mb`]) });
  const limits = prune({ cpu: cpu(spec[`${tier}cpu_limit`]), memory: mem(spec[`${tier}memory_limit_mb`]) });
  return prune({
    requests: Object.keys(requests).length ? requests : undefined,
    limits: Object.keys(limits).length ? limits : undefined,
  });
}

export function prune<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function renderManifests(input: RenderInput): K8sObject[] {
  const app = appName(input.deployment);
  const base = {
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/managed-by": "agentcli",
    "agentcli.dev/deployment-id": input.deployment.id,
  };
  const r: Render = {
    input,
    spec: input.deployment.resource_spec ?? {},
    app,
    base,
    meta: (name, component, extra = {}) => ({
      name,
      namespace: input.namespace,
      labels: { ...base, "app.kubernetes.io/component": component },
      ...extra,
    }),
  };
  const pod = podParts(r);
  return [
    ...secrets(r),
    ...pod.objects,
    ...agentWorkloads(r, pod),
    apiService(r),
    ...autoscalers(r),
    ...database(r),
    ...cache(r),
  ];
}

/** The deployment's Secret (its secrets, as the pods' environment) and the database's credentials (created once). */
function secrets(r: Render): K8sObject[] {
  return [{
    apiVersion: "v1",
    kind: "Secret",
    metadata: r.meta(`${r.app}-secrets`, "secrets"),
    type: "Opaque",
    stringData: Object.fromEntries(r.input.secrets.map((s) => [s.name, s.value])),
  }, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: r.meta(`${r.app}-postgres-auth`, "database", { annotations: { [CREATE_ONLY]: "create-only" } }),
    type: "Opaque",
    stringData: {
      POSTGRES_USER: "agentcli",
      POSTGRES_DB: "agentcli",
      POSTGRES_PASSWORD: createHash("sha256").update(`${r.input.deployment.id}:${Math.random()}`).digest("hex").slice(
        0,
        32,
      ),
    },
  }];
}

/**
 * What the agent's pods carry besides the spec's own: their environment and, for a bundle, the
 * Secret of its token, the volume it is downloaded into, the init container that fetches it and
 * the `agentcli serve` command that runs it.
 */
function podParts(r: Render): PodParts {
  const { input, spec, app } = r;
  const dbAuth = `${app}-postgres-auth`;
  const pod: PodParts = {
    objects: [],
    env: [
      { name: "POSTGRES_PASSWORD", valueFrom: { secretKeyRef: { name: dbAuth, key: "POSTGRES_PASSWORD" } } },
      { name: "DATABASE_URL", value: `postgres://agentcli:$(POSTGRES_PASSWORD)@${app}-postgres:5432/agentcli` },
      { name: "REDIS_URL", value: `redis://${app}-redis:6379` },
      { name: "AGENTCLI_REVISION_ID", value: input.revisionId },
      // Clients reach the pods through the Service, an ingress or a router: many users may share
      // one source address there, so the server's bound of connections per client is off.
      { name: MAX_CONNECTIONS_PER_CLIENT_VARIABLE, value: "0" },
      ...(input.secretReferences ?? []).map((ref) => ({
        name: ref.name,
        valueFrom: { secretKeyRef: { name: ref.secret_name, key: ref.secret_key } },
      })),
    ],
    volumes: [...(spec.volumes ?? [])],
    mounts: [...(spec.volume_mounts ?? [])],
    initContainers: [...(spec.init_containers ?? [])],
    command: undefined,
  };
  if (!input.bundle) return pod;
  const bundleSecret = `${app}-bundle`;
  pod.objects.push({
    apiVersion: "v1",
    kind: "Secret",
    metadata: r.meta(bundleSecret, "bundle"),
    type: "Opaque",
    stringData: { token: input.bundle.token },
  });
  pod.volumes.push({ name: "agentcli-bundle", emptyDir: {} });
  pod.mounts.push({ name: "agentcli-bundle", mountPath: BUNDLE_DIR, readOnly: true });
  pod.initContainers.unshift({
    name: "fetch-bundle",
    image: FETCH_IMAGE,
    command: ["sh", "-c", FETCH_SCRIPT],
    env: [
      { name: "AGENTCLI_BUNDLE_URL", value: input.bundle.url },
      { name: "AGENTCLI_BUNDLE_PATH", value: BUNDLE_PATH },
      { name: "AGENTCLI_BUNDLE_TOKEN", valueFrom: { secretKeyRef: { name: bundleSecret, key: "token" } } },
    ],
    volumeMounts: [{ name: "agentcli-bundle", mountPath: BUNDLE_DIR }],
  });
  pod.command = [
    "agentcli",
    "serve",
    BUNDLE_PATH,
    "--host",
    "0.0.0.0",
    "--port",
    String(API_PORT),
    "--data-dir",
    "/tmp/agentcli",
  ];
  return pod;
}

/** The Service in front of the API server pods. */
function apiService(r: Render): K8sObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: r.meta(r.app, "api-server"),
    spec: {
      type: "ClusterIP",
      selector: { "app.kubernetes.io/name": r.app, "app.kubernetes.io/component": "api-server" },
      ports: [{ name: "http", port: 80, targetPort: API_PORT }],
    },
  };
}

/** A HorizontalPodAutoscaler for the API servers and one for the queue workers, each when its max scale is above its min. */
function autoscalers(r: Render): K8sObject[] {
  const hpa = (target: string, min: number, max: number | undefined): K8sObject[] => {
    if (max === undefined || max <= min) return [];
    return [{
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: r.meta(target, "autoscaler"),
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: target },
        minReplicas: Math.max(1, min),
        maxReplicas: max,
        metrics: [{
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } },
        }],
      },
    }];
  };
  return [
    ...hpa(`${r.app}-api`, r.spec.min_scale ?? 1, r.spec.max_scale),
    ...hpa(`${r.app}-queue`, r.spec.queue_min_scale ?? 1, r.spec.queue_max_scale),
  ];
}
