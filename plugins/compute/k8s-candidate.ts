/**
 * A revision checked before it takes traffic on the `k8s` compute (issue 37's gates): beside
 * the serving pods, one pod of the new revision (Deployment `<app>-candidate`) behind its own
 * Service (`<app>-candidate`), which the deployment's Service does not select. It runs
 * `AGENTCLI_ROLE=all`, so the runs the checks make run in it (a server takes the runs it creates
 * while it has free slots), not on the serving revision's queue workers; it reads its own copy
 * of the revision's secrets, so the serving pods keep theirs until the revision passes. The
 * stores (database, cache) and the bundle's Secret are the deployment's own, applied as usual.
 */
import type { K8sObject } from "../../core/index.ts";
import { API_PORT, appName, type RenderInput, renderManifests } from "./k8s-manifests.ts";

/** The component label of the candidate's objects. */
export const CANDIDATE = "candidate";
/** Runs the candidate executes at once: the eval gate's concurrency (4) and the smoke run fit. */
const CANDIDATE_WORKERS = "8";
const COMPONENT = "app.kubernetes.io/component";
/** Parts of a revision's manifests the candidate needs as they are. */
const SHARED = new Set(["database", "cache", "bundle"]);

export interface Candidate {
  /** What to apply, in order: the deployment's stores and Secrets, then the candidate's Secret, Deployment and Service. */
  objects: K8sObject[];
  /** The candidate's own objects: removed once it is checked. */
  own: K8sObject[];
  /** Its Deployment's and its Service's name. */
  name: string;
}

type Obj = K8sObject & { spec?: any; stringData?: Record<string, string> };

/** The candidate of the revision `input` renders (see the file comment). */
export function renderCandidate(input: RenderInput): Candidate {
  return renderBeside(input, CANDIDATE);
}

/**
 * One pod of the revision `input` renders, as `<app>-<component>` (Deployment, Service and
 * Secret labelled `component`) beside the serving pods: the candidate, or a canary
 * (./k8s-canary.ts).
 */
export function renderBeside(input: RenderInput, component: string): Candidate {
  const app = appName(input.deployment);
  const name = `${app}-${component}`;
  const all = renderManifests(input) as Obj[];
  const relabel = (o: Obj, newName: string): Obj => ({
    ...structuredClone(o),
    metadata: {
      ...structuredClone(o.metadata),
      name: newName,
      labels: { ...o.metadata.labels, [COMPONENT]: component },
    },
  });
  const secrets = relabel(
    all.find((o) => o.kind === "Secret" && o.metadata.name === `${app}-secrets`)!,
    `${name}-secrets`,
  );
  const deployment = relabel(all.find((o) => o.kind === "Deployment" && o.metadata.name === `${app}-api`)!, name);
  const spec = deployment.spec;
  spec.replicas = 1;
  spec.selector.matchLabels[COMPONENT] = component;
  spec.template.metadata.labels[COMPONENT] = component;
  const server = spec.template.spec.containers[0];
  server.name = component;
  server.env = [
    ...server.env.filter((e: { name: string }) => e.name !== "AGENTCLI_ROLE" && e.name !== "AGENTCLI_WORKERS"),
    { name: "AGENTCLI_ROLE", value: "all" },
    { name: "AGENTCLI_WORKERS", value: CANDIDATE_WORKERS },
  ];
  server.envFrom = [{ secretRef: { name: secrets.metadata.name } }];
  const service: Obj = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { ...structuredClone(deployment.metadata), annotations: undefined },
    spec: {
      type: "ClusterIP",
      selector: { "app.kubernetes.io/name": app, [COMPONENT]: component },
      ports: [{ name: "http", port: 80, targetPort: API_PORT }],
    },
  };
  delete service.metadata.annotations;
  const own = [secrets, deployment, service];
  return { objects: [...all.filter((o) => SHARED.has(o.metadata.labels?.[COMPONENT] ?? "")), ...own], own, name };
}
