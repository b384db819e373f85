/**
 * A canary on the `k8s` compute (issue 37): the new revision runs beside the serving pods as
 * `<app>-canary` (one pod, a Deployment and Service of the candidate's shape: ./k8s-candidate.ts),
 * and a router (`<app>-router`: the agentcli image running `agentcli router`, core/server/router/)
 * takes the deployment's traffic: while the canary runs, the deployment's Service selects the
 * router's pods; the router sends the canary's share of new threads to `<app>-canary`, each
 * thread's later requests where it was placed, and the rest to `<app>-serving` (a Service of the
 * serving API pods). The router keeps the threads in the deployment's own PostgreSQL, so its
 * replicas agree and a restarted one forgets none.
 *
 * Promote applies the canary revision to the deployment's own Deployments, then points the
 * Service back at the API pods and removes the canary's objects; abort points it back and
 * removes them.
 */
import type { K8sObject } from "../../core/index.ts";
import { API_PORT, appName, type RenderInput, renderManifests } from "./k8s-manifests.ts";
import { renderBeside } from "./k8s-candidate.ts";

export const CANARY = "canary";
export const ROUTER = "router";
const COMPONENT = "app.kubernetes.io/component";
/** Router replicas: two, so one restarting never stops the deployment's traffic. */
const ROUTER_REPLICAS = 2;
/** Parts of a revision's manifests the canary needs as they are. */
const SHARED = new Set(["database", "cache", "bundle"]);

type Obj = K8sObject & { spec?: any };

export interface Canary {
  /** What to apply, in order: the stores, the canary, the serving Service, the router. */
  objects: K8sObject[];
  /** The deployment's Service pointed at the router: applied once the router runs. */
  front: K8sObject;
  /** The canary's and the router's own objects: removed when it ends. */
  own: K8sObject[];
  /** The deployment's Service as it is without a canary (selecting the API pods): applied when the canary ends. */
  service: K8sObject;
  /** The canary's Deployment and Service name; the router's. */
  name: string;
  router: string;
}

/** The canary of the revision `input` renders, taking `percent` % of new threads; `routerImage`: the agentcli image. */
export function renderCanary(input: RenderInput, o: { percent: number; routerImage: string }): Canary {
  const app = appName(input.deployment);
  const all = renderManifests(input) as Obj[];
  const beside = renderBeside(input, CANARY);
  const service = all.find((x) => x.kind === "Service" && x.metadata.name === app)!;
  const api = all.find((x) => x.kind === "Deployment" && x.metadata.name === `${app}-api`)!;
  const meta = (name: string, component: string) => ({
    ...structuredClone(service.metadata),
    name,
    labels: { ...service.metadata.labels, [COMPONENT]: component },
  });
  const selecting = (component: string) => ({ "app.kubernetes.io/name": app, [COMPONENT]: component });
  const serviceOf = (name: string, component: string, select: string): Obj => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(name, component),
    spec: { type: "ClusterIP", selector: selecting(select), ports: [{ name: "http", port: 80, targetPort: API_PORT }] },
  });
  const serving = serviceOf(`${app}-serving`, "api-server", "api-server");
  const routerName = `${app}-${ROUTER}`;
  const dbEnv = api.spec.template.spec.containers[0].env.filter((e: { name: string }) =>
    e.name === "POSTGRES_PASSWORD" || e.name === "DATABASE_URL"
  );
  const router: Obj = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      ...meta(routerName, ROUTER),
      annotations: {
        "agentcli.dev/canary-revision-id": input.revisionId,
        "agentcli.dev/canary-percent": String(o.percent),
      },
    },
    spec: {
      replicas: ROUTER_REPLICAS,
      selector: { matchLabels: selecting(ROUTER) },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: {
          labels: { ...api.spec.template.metadata.labels, [COMPONENT]: ROUTER },
          annotations: { "agentcli.dev/revision-id": input.revisionId },
        },
        spec: {
          containers: [{
            name: ROUTER,
            image: o.routerImage,
            command: [
              "agentcli",
              "router",
              "--serving",
              `http://${serving.metadata.name}`,
              "--canary",
              `http://${beside.name}`,
              "--percent",
              String(o.percent),
              "--deployment",
              input.deployment.id,
              "--revision",
              input.revisionId,
              "--port",
              String(API_PORT),
            ],
            env: dbEnv,
            ports: [{ name: "http", containerPort: API_PORT }],
            readinessProbe: { httpGet: { path: "/router/ok", port: API_PORT }, periodSeconds: 5 },
            livenessProbe: { httpGet: { path: "/router/ok", port: API_PORT }, periodSeconds: 15, failureThreshold: 4 },
          }],
        },
      },
    },
  };
  const routerService = serviceOf(routerName, ROUTER, ROUTER);
  const front: Obj = {
    ...structuredClone(service),
    spec: { ...structuredClone(service.spec), selector: selecting(ROUTER) },
  };
  const own = [...beside.own, serving, router, routerService];
  return {
    objects: [...all.filter((x) => SHARED.has(x.metadata.labels?.[COMPONENT] ?? "")), ...own],
    front,
    own,
    service,
    name: beside.name,
    router: routerName,
  };
}
