/**
 * The `compute` plugins' contract: what the control plane's reconciler asks of the compute that
 * runs a listener's revisions. Provision a deployment's storage, roll a revision out (resolving
 * only once it is healthy, while the previous revision keeps serving), tear a deployment down.
 * A plugin of kind `compute` declares the listener type it runs (`compute: { type }`, a
 * listener's `compute_type`; a deployment without a listener runs on `local`) and answers the
 * `compute:driver` hook with a {@link ComputeDriver}, once, when the control plane opens; the
 * {@link ComputeContext} it gets is what it may use of the control plane. Built in:
 * `compute-local` (type `local`: `agentcli serve` child processes on this machine) and
 * `compute-k8s` (type `k8s`: manifests applied to a cluster).
 *
 * @example
 * definePlugin({
 *   name: "compute-nomad",
 *   kind: "compute",
 *   compute: { type: "nomad" },
 *   hooks: { "compute:driver": (ctx) => nomadCompute(ctx) }, // a ComputeDriver (docs/plugins.md has one)
 * });
 */

/** `source_config.resource_spec` of a deployment (spec 2.10), as the control plane validated it. */
export interface ComputeResourceSpec {
  min_scale?: number;
  max_scale?: number;
  cpu?: number;
  cpu_limit?: number;
  memory_mb?: number;
  memory_limit_mb?: number;
  queue_min_scale?: number;
  queue_max_scale?: number;
  queue_cpu?: number;
  queue_cpu_limit?: number;
  queue_memory_mb?: number;
  queue_memory_limit_mb?: number;
  redis_cpu?: number;
  redis_cpu_limit?: number;
  redis_memory_mb?: number;
  redis_memory_limit_mb?: number;
  db_cpu?: number;
  db_cpu_limit?: number;
  db_memory_mb?: number;
  db_memory_limit_mb?: number;
  db_storage_gi?: number;
  db_max_connections?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  service_account_name?: string;
  image_pull_secrets?: Array<{ name: string }>;
  /** Kubernetes `Volume`, `VolumeMount` and `Container` objects, as given. */
  volumes?: Array<Record<string, unknown>>;
  volume_mounts?: Array<Record<string, unknown>>;
  init_containers?: Array<Record<string, unknown>>;
  sidecars?: Array<Record<string, unknown>>;
}

/** A deployment, as a compute sees it (the control plane's row has more). */
export interface ComputeDeployment {
  id: string;
  tenant_id: string;
  name: string;
  source_config: {
    resource_spec?: ComputeResourceSpec | null;
    /** The namespace chosen among the listener's (`k8s`). */
    listener_config?: { k8s_namespace?: string | null } | null;
    /** The URL the deployment answers at, when its owner set one. */
    custom_url?: string | null;
  };
  /** Variables the deployment reads from secrets of its cluster (`k8s`). */
  secret_references: Array<{ name: string; secret_name: string; secret_key: string }> | null;
}

/** A revision of a deployment. */
export interface ComputeRevision {
  id: string;
}

/** The listener a deployment names (null: none, the `local` compute). */
export interface ComputeListener {
  id: string;
  compute_type: string;
  /** The listener's name for its compute (a cluster's name). */
  compute_id: string;
  /** Settings of its type (`k8s`: `k8s_namespaces`). */
  compute_config: Record<string, unknown>;
  /** The cluster's kubeconfig (`agentcli platform admin set-kubeconfig`), or null. */
  kubeconfig: string | null;
}

/** Writes a line to a revision's build or deploy log. */
export type RevisionLog = (kind: "build" | "deploy", message: string) => void;

export interface RolloutRequest {
  deployment: ComputeDeployment;
  revision: ComputeRevision;
  listener: ComputeListener | null;
  /** The built bundle (sources that build one), or null for container images. */
  bundle: Uint8Array | null;
  imageUri: string | null;
  /**
   * A folder on the control plane's machine holding the npm packages its build installed for
   * a LangGraph.js project's `dependencies` (`<folder>/node_modules`, one per installed project
   * folder, listed in its `agentcli-units.json`); null or absent when the project needs none
   * (agentcli lends the rest). Run the bundle with `agentcli serve --packages <folder>`; a
   * compute whose revisions cannot reach it refuses the revision with the reason.
   */
  packages?: string | null;
  /** The revision's variables: its secrets and the control plane's (never log the values). */
  secrets: Array<{ name: string; value: string }>;
  log: RevisionLog;
  signal: AbortSignal;
  /**
   * Checks the new revision at its own address (`http://host:port`) once it is healthy and
   * before it takes any traffic (issue 37's gates); throws, with the reason, to keep it out: the
   * compute then stops it and the previous revision keeps serving.
   */
  gate?: (url: string) => Promise<void>;
  /**
   * Send only this percentage of new threads to the new revision (sticky per thread) beside the
   * serving one, until {@link ComputeDriver.promote} or {@link ComputeDriver.abortCanary}. A
   * compute without canaries throws a readable reason.
   */
  canaryPercent?: number | null;
}

/** What a `compute:driver` hook answers: the compute of one listener type. Its errors' messages become the revision's reason. */
export interface ComputeDriver {
  readonly kind: string;
  /**
   * What of issue 37's release safety this compute carries out: `gates` (it calls
   * `RolloutRequest.gate` before traffic), `canary` (it honours `canaryPercent` and has
   * `promote`/`abortCanary`). A revision asking for what its compute lacks fails with the reason.
   */
  readonly releases?: { gates: boolean; canary: boolean };
  /** Creates the deployment's storage (database, data folder); idempotent. */
  provision(
    deployment: ComputeDeployment,
    listener: ComputeListener | null,
    log: (message: string) => void,
  ): Promise<void>;
  /** Runs the revision and switches traffic to it once healthy (and through `gate`); throws (with a readable reason) when it cannot. */
  rollout(req: RolloutRequest): Promise<{ url: string | null }>;
  /** The canary revision takes all traffic; the previous one stops once its requests finish. */
  promote?(deployment: ComputeDeployment, listener: ComputeListener | null, revisionId: string): Promise<void>;
  /** The canary revision stops; its threads go back to the serving revision. */
  abortCanary?(deployment: ComputeDeployment, listener: ComputeListener | null, revisionId: string): Promise<void>;
  /** Stops everything of the deployment and deletes its storage. */
  teardown(deployment: ComputeDeployment, listener: ComputeListener | null): Promise<void>;
  /**
   * After a control-plane restart: runs the active revision again, or, with `canaryPercent`, the
   * running canary beside it (its threads are in {@link ComputeContext.canaryThreads}); null
   * when this replica never ran the deployment.
   */
  restore?(req: Omit<RolloutRequest, "signal">): Promise<{ url: string | null } | null>;
  /** The control plane closes: stop what runs here (processes, connections). */
  close(): Promise<void>;
}

/** A Kubernetes object, ready for the API. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/** Annotation telling {@link KubeApi.apply} to create an object once and never overwrite it (generated passwords). */
export const CREATE_ONLY = "agentcli.dev/apply-policy";

/** A cluster's API, as the control plane reaches it with a listener's kubeconfig. Errors say what failed and what the API answered. */
export interface KubeApi {
  /** Creates or updates (merge-patches) every object, in order; objects annotated {@link CREATE_ONLY} are only created. */
  apply(
    objects: K8sObject[],
    log?: (m: string) => void,
  ): Promise<Array<{ kind: string; name: string; action: "created" | "updated" | "kept" }>>;
  /** Resolves once a Deployment runs its desired replicas of the newest template; polls `attempts` times. */
  waitForRollout(
    namespace: string,
    name: string,
    opts?: { attempts?: number; intervalMs?: number; signal?: AbortSignal },
  ): Promise<void>;
  /** Deletes the objects, last first (missing ones are fine). */
  remove(objects: K8sObject[]): Promise<void>;
  /**
   * A loopback address (`http://127.0.0.1:<port>`) forwarding to a Service's port (its name or
   * number) through the API server's service proxy, with this client's credentials; close it
   * when done.
   */
  serviceProxy(
    o: { namespace: string; service: string; port: string | number },
  ): Promise<{ url: string; close(): Promise<void> }>;
}

/** The control plane's PostgreSQL, when it has one: revisions on this machine may get a schema of it each. */
export interface ComputeDatabase {
  /** Its URL (revisions connect with `options=-c search_path=<schema>`). */
  url: string;
  /** `CREATE SCHEMA IF NOT EXISTS`. */
  createSchema(name: string): Promise<void>;
  /** `DROP SCHEMA IF EXISTS ... CASCADE`. */
  dropSchema(name: string): Promise<void>;
}

/**
 * Where the threads a running canary took are kept (issue 37): the control plane's store, so a
 * restart, another replica or a router sends each thread's later turns to the same revision.
 * The control plane forgets them when the canary ends.
 */
export interface CanaryThreads {
  /** Records that `threadId` runs on the canary `revisionId`; resolve it before the thread's creator learns its id. */
  assign(a: { deploymentId: string; revisionId: string; threadId: string }): Promise<void>;
  /** The canary revision a thread was placed on, or null (the serving revision). */
  revisionOf(q: { deploymentId: string; threadId: string }): Promise<string | null>;
  /** How many threads the deployment's running canary took. */
  count(deploymentId: string): Promise<number>;
}

/** What `compute:driver` receives: what a compute may use of the control plane that opens it. */
export interface ComputeContext {
  /** The listener type asked for (the plugin's `compute.type`). */
  type: string;
  /** A folder of this compute's own for deployments' files. */
  dataDir: string;
  /** The host revisions on this machine bind (the control plane's, loopback for a wildcard bind). */
  host: string;
  /** The control plane's PostgreSQL, or null (its embedded database). */
  database: ComputeDatabase | null;
  /** The control plane's environment: revisions on this machine inherit it (minus its own credentials). */
  env: Readonly<Record<string, string | undefined>>;
  /** The argv prefix that starts this agentcli (`agentcli serve` for a revision is this plus its arguments). */
  command: string[];
  /**
   * Absolute paths of the third-party plugin files the control plane was started with: every
   * revision on this machine loads exactly these (its `AGENTCLI_PLUGINS`). Absent: revisions
   * inherit `AGENTCLI_PLUGINS` from `env`.
   */
  plugins?: readonly string[];
  /** Connections one client address may hold at once on a deployment's address (`AGENTCLI_MAX_CONNECTIONS_PER_CLIENT`; 0: no bound). */
  maxConnectionsPerClient: number;
  /**
   * Where a cluster downloads a revision's bundle, and the token it sends; null while the
   * control plane has no public address (`--public-url`). Read at rollout time.
   */
  bundleAccess(deploymentId: string, revisionId: string): { url: string; token: string } | null;
  /** A client of the cluster a kubeconfig names (its current context); throws when it cannot be read. */
  kube(kubeconfig: string): KubeApi;
  /** The threads of running canaries, in the control plane's store. */
  canaryThreads: CanaryThreads;
}
