/**
 * The agent's own Deployments of a revision's manifests (./k8s-manifests.ts): the API servers
 * (`AGENTCLI_ROLE=api`, the port, health probes) and the queue workers (`AGENTCLI_ROLE=worker`),
 * each sized and scaled by its part of the `resource_spec`, rolled out without ever running fewer
 * ready pods than wanted.
 */
import { createHash } from "node:crypto";
import type { K8sObject } from "../../core/index.ts";
import { API_PORT, prune, type Render, resources } from "./k8s-manifests.ts";

/** What the agent's pods carry besides the spec's own (see `podParts` in ./k8s-manifests.ts). */
export interface PodParts {
  /** Objects the pods need (the bundle token's Secret). */
  objects: K8sObject[];
  env: Array<Record<string, unknown>>;
  volumes: Array<Record<string, unknown>>;
  mounts: Array<Record<string, unknown>>;
  initContainers: Array<Record<string, unknown>>;
  /** The container's command (a bundle's `agentcli serve`); undefined: the image's own. */
  command: string[] | undefined;
}

type Role = "api-server" | "queue-worker";

/** The API server Deployment, then the queue worker Deployment. */
export function agentWorkloads(r: Render, pod: PodParts): K8sObject[] {
  return [
    workload(r, pod, { role: "api-server", replicas: r.spec.min_scale ?? 1, res: resources(r.spec, "") }),
    workload(r, pod, { role: "queue-worker", replicas: r.spec.queue_min_scale ?? 1, res: resources(r.spec, "queue_") }),
  ];
}

function workload(
  r: Render,
  pod: PodParts,
  { role, replicas, res }: { role: Role; replicas: number; res: Record<string, unknown> },
): K8sObject {
  const { spec, app } = r;
  const labels = { ...(spec.labels ?? {}), ...r.base, "app.kubernetes.io/component": role };
  const secretHash = hashOf(r.input.secrets);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      ...r.meta(`${app}-${role === "api-server" ? "api" : "queue"}`, role),
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
            "agentcli.dev/revision-id": r.input.revisionId,
            "agentcli.dev/secrets-hash": secretHash,
          },
        },
        spec: podSpec(r, pod, { role, res }),
      },
    },
  };
}

function podSpec(r: Render, pod: PodParts, { role, res }: { role: Role; res: Record<string, unknown> }) {
  const { spec } = r;
  const withPort = role === "api-server";
  return prune({
    serviceAccountName: spec.service_account_name,
    imagePullSecrets: spec.image_pull_secrets,
    volumes: pod.volumes.length ? pod.volumes : undefined,
    initContainers: pod.initContainers.length ? pod.initContainers : undefined,
    containers: [
      prune({
        name: role,
        image: r.input.image,
        command: pod.command,
        // serve's role (core/engine/queue/roles.ts): the API replicas run no runs; the queue workers
        // run as many at once as their CPU request allows (4 per CPU, at least 4).
        env: [
          ...pod.env,
          { name: "AGENTCLI_ROLE", value: role === "api-server" ? "api" : "worker" },
          ...(role === "queue-worker" && spec.queue_cpu
            ? [{ name: "AGENTCLI_WORKERS", value: String(Math.max(4, Math.round(4 * spec.queue_cpu))) }]
            : []),
        ],
        envFrom: [{ secretRef: { name: `${r.app}-secrets` } }],
        ports: withPort ? [{ name: "http", containerPort: API_PORT }] : undefined,
        readinessProbe: withPort ? { httpGet: { path: "/ok", port: API_PORT }, periodSeconds: 5 } : undefined,
        livenessProbe: withPort
          ? { httpGet: { path: "/ok", port: API_PORT }, periodSeconds: 15, failureThreshold: 4 }
          : undefined,
        resources: Object.keys(res).length ? res : undefined,
        volumeMounts: pod.mounts.length ? pod.mounts : undefined,
      }),
      ...(spec.sidecars ?? []),
    ],
  });
}

/** Changes when the secrets do, so their new values roll the pods. */
function hashOf(secrets: Array<{ name: string; value: string }>): string {
  return createHash("sha256").update(JSON.stringify(secrets)).digest("hex").slice(0, 16);
}
