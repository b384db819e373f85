/**
 * The stores of a revision's manifests (./k8s-manifests.ts): the deployment's PostgreSQL (a
 * StatefulSet with its volume claim, sized by the `db_*` fields) and Redis (a Deployment, sized
 * by `redis_*`), each with its Service.
 */
import type { K8sObject } from "../../core/index.ts";
import { prune, type Render, resources } from "./k8s-manifests.ts";

/** The PostgreSQL StatefulSet and its Service. */
export function database(r: Render): K8sObject[] {
  const { spec, app } = r;
  const dbArgs = spec.db_max_connections ? ["-c", `max_connections=${spec.db_max_connections}`] : undefined;
  const dbRes = resources(spec, "db_");
  return [{
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: r.meta(`${app}-postgres`, "database"),
    spec: {
      serviceName: `${app}-postgres`,
      replicas: 1,
      selector: { matchLabels: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "database" } },
      template: {
        metadata: { labels: { ...r.base, "app.kubernetes.io/component": "database" } },
        spec: {
          containers: [prune({
            name: "postgres",
            image: "postgres:16",
            args: dbArgs,
            envFrom: [{ secretRef: { name: `${app}-postgres-auth` } }],
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
  }, {
    apiVersion: "v1",
    kind: "Service",
    metadata: r.meta(`${app}-postgres`, "database"),
    spec: {
      selector: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "database" },
      ports: [{ name: "postgres", port: 5432, targetPort: 5432 }],
    },
  }];
}

/** The Redis Deployment and its Service. */
export function cache(r: Render): K8sObject[] {
  const { app } = r;
  const redisRes = resources(r.spec, "redis_");
  return [{
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: r.meta(`${app}-redis`, "cache"),
    spec: {
      replicas: 1,
      selector: { matchLabels: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "cache" } },
      template: {
        metadata: { labels: { ...r.base, "app.kubernetes.io/component": "cache" } },
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
  }, {
    apiVersion: "v1",
    kind: "Service",
    metadata: r.meta(`${app}-redis`, "cache"),
    spec: {
      selector: { "app.kubernetes.io/name": app, "app.kubernetes.io/component": "cache" },
      ports: [{ name: "redis", port: 6379, targetPort: 6379 }],
    },
  }];
}
