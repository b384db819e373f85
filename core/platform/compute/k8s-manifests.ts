/**
 * Kubernetes manifests of one deployment revision, from its `resource_spec` (spec 2.10):
 * API server and queue worker Deployments (scales, cpu/memory requests and limits, pod
 * labels, annotations, service account, pull secrets, volumes, mounts, init containers,
 * sidecars), a Service, HorizontalPodAutoscalers from min/max scales, a PostgreSQL
 * StatefulSet and a Redis Deployment sized by the `db_*` / `redis_*` fields, and the
 * Secret of the deployment's secrets. For a bundle (not an image), an init container
 * downloads the revision's bundle from the control plane into a shared volume and the
 * server runs `agentcli serve` on it. Plain objects, ready for the Kubernetes API.
 *
 * @example
 * const objects = renderManifests({ deployment, revisionId, namespace: "agents", image: "registry/agent:1", secrets });
 */
import { createHash } from "node:crypto";
import type { ResourceSpec, SecretReference } from "../api/schema.ts";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

export interface RenderInput {
  deployment: { id: string; name: string; resource_spec?: ResourceSpec | null };
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
  secretReferences?: SecretReference[] | null;
}

/** Annotation telling the apply client to create an object once and never overwrite it (generated passwords). */
export const CREATE_ONLY = "agentcli.dev/apply-policy";

const API_PORT = 8000;
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

function resources(requestCpu?: number, limitCpu?: number, requestMb?: number, limitMb?: number) {
  const requests = prune({ cpu: cpu(requestCpu), memory: mem(requestMb) });
  const limits = prune({ cpu: cpu(limitCpu), memory: mem(limitMb) });
  return prune({
    requests: Object.keys(requests).length ? requests : undefined,
    limits: Object.keys(limits).length ? limits : undefined,
  });
}

function prune<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function renderManifests(input: RenderInput): K8sObject[] {
  const spec: ResourceSpec = input.deployment.resource_spec ?? {};
  const app = appName(input.deployment);
  const ns = input.namespace;
  const base = {
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/managed-by": "agentcli",
    "agentcli.dev/deployment-id": input.deployment.id,
  };
  const meta = (name: string, component: string, extra: { annotations?: Record<string, string> } = {}) => ({
    name,
    namespace: ns,
    labels: { ...base, "app.kubernetes.io/component": component },
    ...extra,
  });
  const objects: K8sObject[] = [];
  const secretName = `${app}-secrets`;
  const dbAuth = `${app}-postgres-auth`;
  const secretHash = createHash("sha256").update(JSON.stringify(input.secrets)).digest("hex").slice(0, 16);

  objects.push({
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(secretName, "secrets"),
    type: "Opaque",
    stringData: Object.fromEntries(input.secrets.map((s) => [s.name, s.value])),
  });
  objects.push({
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(dbAuth, "database", { annotations: { [CREATE_ONLY]: "create-only" } }),
    type: "Opaque",
    stringData: {
      POSTGRES_USER: "agentcli",
      POSTGRES_DB: "agentcli",
      POSTGRES_PASSWORD: createHash("sha256").update(`${input.deployment.id}:${Math.random()}`).digest("hex").slice(
        0,
        32,
      ),
    },
  });

  const env = [
    { name: "POSTGRES_PASSWORD", valueFrom: { secretKeyRef: { name: dbAuth, key: "POSTGRES_PASSWORD" } } },
    { name: "DATABASE_URL", value: `postgres://agentcli:$(POSTGRES_PASSWORD)@${app}-postgres:5432/agentcli` },
    { name: "REDIS_URL", value: `redis://${app}-redis:6379` },
    { name: "AGENTCLI_REVISION_ID", value: input.revisionId },
    ...(input.secretReferences ?? []).map((r) => ({
      name: r.name,
      valueFrom: { secretKeyRef: { name: r.secret_name, key: r.secret_key } },
    })),
  ];
  const volumes: Array<Record<string, unknown>> = [...(spec.volumes ?? [])];
  const mounts: Array<Record<string, unknown>> = [...(spec.volume_mounts ?? [])];
  const initContainers: Array<Record<string, unknown>> = [...(spec.init_containers ?? [])];
  let command: string[] | undefined;
  if (input.bundle) {
    const bundleSecret = `${app}-bundle`;
    objects.push({
      apiVersion: "v1",
      kind: "Secret",
      metadata: meta(bundleSecret, "bundle"),
      type: "Opaque",
      stringData: { token: input.bundle.token },
    });
    volumes.push({ name: "agentcli-bundle", emptyDir: {} });
    mounts.push({ name: "agentcli-bundle", mountPath: BUNDLE_DIR, readOnly: true });
    initContainers.unshift({
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
    command = [
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
  }

  const podSpec = (role: "api-server" | "queue-worker", res: Record<string, unknown>, withPort: boolean) =>
    prune({
      serviceAccountName: spec.service_account_name,
      imagePullSecrets: spec.image_pull_secrets,
      volumes: volumes.length ? volumes : undefined,
      initContainers: initContainers.length ? initContainers : undefined,
      containers: [
        prune({
          name: role,
          image: input.image,
          command,
          // serve's role (core/engine/queue/roles.ts): the API replicas run no runs; the queue workers
          // run as many at once as their CPU request allows (4 per CPU, at least 4).
          env: [
            ...env,
            { name: "AGENTCLI_ROLE", value: role === "api-server" ? "api" : "worker" },
            ...(role === "queue-worker" && spec.queue_cpu
              ? [{ name: "AGENTCLI_WORKERS", value: String(Math.max(4, Math.round(4 * spec.queue_cpu))) }]
              : []),
          ],
          envFrom: [{ secretRef: { name: secretName } }],
          ports: withPort ? [{ name: "http", containerPort: API_PORT }] : undefined,
          readinessProbe: withPort ? { httpGet: { path: "/ok", port: API_PORT }, periodSeconds: 5 } : undefined,
          livenessProbe: withPort
            ? { httpGet: { path: "/ok", port: API_PORT }, periodSeconds: 15, failureThreshold: 4 }
            : undefined,
          resources: Object.keys(res).length ? res : undefined,
          volumeMounts: mounts.length ? mounts : undefined,
        }),
        ...(spec.sidecars ?? []),
      ],
    });
  const workload = (role: "api-server" | "queue-worker", replicas: number, res: Record<string, unknown>) => {
    const labels = { ...(spec.labels ?? {}), ...base, "app.kubernetes.io/component": role };
    return {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        ...meta(`${app}-${role === "api-server" ? "api" : "queue"}`, role),
        ...(spec.annotations ? { annotations: spec.annotations } : {}),
      },
      spec: {
        replicas,
        selector: { matchLabels: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": role } },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
        template: {
          metadata: {
            labels,
            annotations: {
              ...(spec.annotations ?? {}),
              "agentcli.dev/revision-id": input.revisionId,
              "agentcli.dev/secrets-hash": secretHash,
            },
          },
          spec: podSpec(role, res, role === "api-server"),
        },
      },
    } satisfies K8sObject;
  };
  const apiMin = spec.min_scale ?? 1;
  const queueMin = spec.queue_min_scale ?? 1;
  objects.push(
    workload("api-server", apiMin, resources(spec.cpu, spec.cpu_limit, spec.memory_mb, spec.memory_limit_mb)),
  );
  objects.push(
    workload(
      "queue-worker",
      queueMin,
      resources(spec.queue_cpu, spec.queue_cpu_limit, spec.queue_memory_mb, spec.queue_memory_limit_mb),
    ),
  );
  objects.push({
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(app, "api-server"),
    spec: {
      type: "ClusterIP",
      selector: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "api-server" },
      ports: [{ name: "http", port: 80, targetPort: API_PORT }],
    },
  });
  const hpa = (target: string, min: number, max: number | undefined) => {
    if (max === undefined || max <= min) return;
    objects.push({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: meta(target, "autoscaler"),
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: target },
        minReplicas: Math.max(1, min),
        maxReplicas: max,
        metrics: [{
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } },
        }],
      },
    });
  };
  hpa(`${app}-api`, apiMin, spec.max_scale);
  hpa(`${app}-queue`, queueMin, spec.queue_max_scale);

  const dbArgs = spec.db_max_connections ? ["-c", `max_connections=${spec.db_max_connections}`] : undefined;
  const dbRes = resources(spec.db_cpu, spec.db_cpu_limit, spec.db_memory_mb, spec.db_memory_limit_mb);
  objects.push({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: meta(`${app}-postgres`, "database"),
    spec: {
      serviceName: `${app}-postgres`,
      replicas: 1,
      selector: { matchLabels: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "database" } },
      template: {
        metadata: { labels: { ...base, "app.kubernetes.io/component": "database" } },
        spec: {
          containers: [prune({
            name: "postgres",
            image: "postgres:16",
            args: dbArgs,
            envFrom: [{ secretRef: { name: dbAuth } }],
            env: [{ name: "PGDATA", value: "/var/lib/postgresql/data/pgdata" }],
            ports: [{ name: "postgres", containerPort: 5432 }],
            readinessProbe: { exec: { command: ["pg_isready", "-U", "agentcli"] }, periodSeconds: 5 },
            resources: Object.keys(dbRes).length ? dbRes : undefined,
            volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql/data" }],
          })],
        },
      },
      volumeClaimTemplates: [{
        metadata: { name: "data" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: `${spec.db_storage_gi ?? 10}Gi` } } },
      }],
    },
  });
  objects.push({
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(`${app}-postgres`, "database"),
    spec: {
      selector: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "database" },
      ports: [{ name: "postgres", port: 5432, targetPort: 5432 }],
    },
  });
  const redisRes = resources(spec.redis_cpu, spec.redis_cpu_limit, spec.redis_memory_mb, spec.redis_memory_limit_mb);
  objects.push({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(`${app}-redis`, "cache"),
    spec: {
      replicas: 1,
      selector: { matchLabels: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "cache" } },
      template: {
        metadata: { labels: { ...base, "app.kubernetes.io/component": "cache" } },
        spec: {
          containers: [
            prune({
              name: "redis",
              image: "redis:7",
              ports: [{ name: "redis", containerPort: 6379 }],
              resources: Object.keys(redisRes).length ? redisRes : undefined,
            }),
          ],
        },
      },
    },
  });
  objects.push({
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(`${app}-redis`, "cache"),
    spec: {
      selector: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "cache" },
      ports: [{ name: "redis", port: 6379, targetPort: 6379 }],
    },
  });
  return objects;
}
