/**
 * Request bodies of the control-plane API (spec 2.9-2.14, 4.3) as zod schemas. Unknown
 * members are refused (`strict`), so a typo is a 422 naming the field instead of a silent
 * no-op; `repo_commit_sha` is therefore refused in requests, as the spec says.
 *
 * @example
 * const body = DeploymentCreateBody.parse(await c.req.json());
 */
import { z } from "zod";

export const SOURCES = [
  "repohost",
  "external_container",
  "internal_container",
  "internal_source",
  "internal_template",
] as const;
export type Source = (typeof SOURCES)[number];

export const DEPLOYMENT_STATUSES = ["AWAITING_DATABASE", "READY", "UNUSED", "AWAITING_DELETE", "UNKNOWN"] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export const REVISION_STATUSES = [
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "DEPLOYED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

export const DEPLOYMENT_TYPES = ["dev_free", "dev", "prod"] as const;

const num = z.number().nonnegative();
const stringMap = z.record(z.string(), z.string());
const freeObject = z.record(z.string(), z.unknown());

const VolumeMount = z.strictObject({
  name: z.string().min(1),
  mountPath: z.string().min(1),
  subPath: z.string().optional(),
  mountPropagation: z.string().optional(),
  subPathExpr: z.string().optional(),
  readOnly: z.boolean().optional(),
});

const VOLUME_KINDS = [
  "configMap",
  "secret",
  "emptyDir",
  "persistentVolumeClaim",
  "nfs",
  "projected",
  "downwardAPI",
  "csi",
] as const;

const Volume = z
  .strictObject({
    name: z.string().min(1),
    configMap: freeObject.optional(),
    secret: freeObject.optional(),
    emptyDir: freeObject.optional(),
    persistentVolumeClaim: freeObject.optional(),
    nfs: freeObject.optional(),
    projected: freeObject.optional(),
    downwardAPI: freeObject.optional(),
    csi: freeObject.optional(),
  })
  .refine((v) => VOLUME_KINDS.some((k) => v[k] !== undefined), {
    message: `a volume needs one of ${VOLUME_KINDS.join(", ")}`,
  });

const Container = z.strictObject({
  name: z.string().min(1),
  image: z.string().min(1),
  imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
  workingDir: z.string().optional(),
  restartPolicy: z.string().optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.array(
    z.strictObject({ name: z.string().min(1), value: z.string().optional(), valueFrom: freeObject.optional() }),
  ).optional(),
  envFrom: z.array(freeObject).optional(),
  resources: z.strictObject({ limits: freeObject.optional(), requests: freeObject.optional() }).optional(),
  volumeMounts: z.array(VolumeMount).optional(),
  securityContext: freeObject.optional(),
});

/** `source_config.resource_spec` (spec 2.10): every field optional, all validated. */
export const ResourceSpec = z
  .strictObject({
    min_scale: z.number().int().nonnegative().optional(),
    max_scale: z.number().int().positive().optional(),
    cpu: num.optional(),
    cpu_limit: num.optional(),
    memory_mb: num.optional(),
    memory_limit_mb: num.optional(),
    queue_min_scale: z.number().int().nonnegative().optional(),
    queue_max_scale: z.number().int().positive().optional(),
    queue_cpu: num.optional(),
    queue_cpu_limit: num.optional(),
    queue_memory_mb: num.optional(),
    queue_memory_limit_mb: num.optional(),
    orchestrator_cpu: num.optional(),
    orchestrator_cpu_limit: num.optional(),
    orchestrator_memory_mb: num.optional(),
    orchestrator_memory_limit_mb: num.optional(),
    orchestrator_min_scale: z.number().int().nonnegative().optional(),
    orchestrator_max_scale: z.number().int().positive().optional(),
    executor_cpu: num.optional(),
    executor_cpu_limit: num.optional(),
    executor_memory_mb: num.optional(),
    executor_memory_limit_mb: num.optional(),
    redis_cpu: num.optional(),
    redis_cpu_limit: num.optional(),
    redis_memory_mb: num.optional(),
    redis_memory_limit_mb: num.optional(),
    db_cpu: num.optional(),
    db_cpu_limit: num.optional(),
    db_memory_mb: num.optional(),
    db_memory_limit_mb: num.optional(),
    db_storage_gi: num.optional(),
    db_max_connections: z.number().int().positive().optional(),
    labels: stringMap.optional(),
    annotations: stringMap.optional(),
    service_account_name: z.string().min(1).optional(),
    image_pull_secrets: z.array(z.strictObject({ name: z.string().min(1) })).optional(),
    volumes: z.array(Volume).optional(),
    volume_mounts: z.array(VolumeMount).optional(),
    init_containers: z.array(Container).optional(),
    sidecars: z.array(Container).optional(),
  })
  .superRefine((spec, ctx) => {
    const pairs: Array<[keyof typeof spec, keyof typeof spec]> = [
      ["min_scale", "max_scale"],
      ["queue_min_scale", "queue_max_scale"],
      ["orchestrator_min_scale", "orchestrator_max_scale"],
      ["cpu", "cpu_limit"],
      ["memory_mb", "memory_limit_mb"],
      ["queue_cpu", "queue_cpu_limit"],
      ["queue_memory_mb", "queue_memory_limit_mb"],
      ["db_cpu", "db_cpu_limit"],
      ["db_memory_mb", "db_memory_limit_mb"],
      ["redis_cpu", "redis_cpu_limit"],
      ["redis_memory_mb", "redis_memory_limit_mb"],
    ];
    for (const [low, high] of pairs) {
      const a = spec[low] as number | undefined;
      const b = spec[high] as number | undefined;
      if (a !== undefined && b !== undefined && a > b) {
        ctx.addIssue({ code: "custom", path: [high], message: `must be at least ${low} (${a})` });
      }
    }
    const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
    const mounts = [
      ...(spec.volume_mounts ?? []).map((m, i) => ({ m, path: ["volume_mounts", i, "name"] })),
      ...[...(spec.init_containers ?? []), ...(spec.sidecars ?? [])].flatMap((c) =>
        (c.volumeMounts ?? []).map((m) => ({ m, path: ["volumes"] }))
      ),
    ];
    for (const { m, path } of mounts) {
      if (!volumes.has(m.name)) {
        ctx.addIssue({ code: "custom", path, message: `mounts volume "${m.name}", which is not in volumes` });
      }
    }
  });
export type ResourceSpec = z.infer<typeof ResourceSpec>;

/** `source_config` (spec 2.10); every field nullable. */
export const SourceConfig = z.strictObject({
  integration_id: z.uuid().nullish(),
  repo_url: z.string().min(1).nullish(),
  deployment_type: z.enum(DEPLOYMENT_TYPES).nullish(),
  build_on_push: z.boolean().nullish(),
  custom_url: z.string().min(1).nullish(),
  resource_spec: ResourceSpec.nullish(),
  listener_id: z.uuid().nullish(),
  listener_config: z.strictObject({ k8s_namespace: z.string().min(1).nullish() }).nullish(),
  install_command: z.string().nullish(),
  build_command: z.string().nullish(),
  /** Extension: the prebuilt template of an `internal_template` deployment. */
  template: z.string().min(1).nullish(),
});
export type SourceConfig = z.infer<typeof SourceConfig>;

/** `source_revision_config` in requests (spec 2.11): `repo_commit_sha` is response-only. */
export const SourceRevisionConfigInput = z.strictObject({
  repo_ref: z.string().min(1).nullish(),
  graph_config_path: z.string().min(1).nullish(),
  image_uri: z.string().min(1).nullish(),
  source_tarball_path: z.string().min(1).nullish(),
  repo_commit_sha: z.never({ error: "is set by the control plane from repo_ref; it appears in responses only" })
    .optional(),
});
export type SourceRevisionConfig = Omit<z.infer<typeof SourceRevisionConfigInput>, "repo_commit_sha"> & {
  repo_commit_sha?: string | null;
};

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const Secrets = z.array(
  z.strictObject({ name: z.string().regex(SECRET_NAME, "must be an environment variable name"), value: z.string() }),
);
export type Secret = z.infer<typeof Secrets>[number];
export const SecretReferences = z.array(
  z.strictObject({
    name: z.string().regex(SECRET_NAME),
    secret_name: z.string().min(1),
    secret_key: z.string().min(1),
  }),
);
export type SecretReference = z.infer<typeof SecretReferences>[number];

export const DeploymentCreateBody = z.strictObject({
  name: z.string().min(1).max(128).regex(
    /^[A-Za-z0-9]([A-Za-z0-9._ -]*[A-Za-z0-9])?$/,
    "letters, digits, '.', '_', '-' and spaces, starting and ending with a letter or digit",
  ),
  source: z.enum(SOURCES),
  source_config: SourceConfig.nullish(),
  source_revision_config: SourceRevisionConfigInput.nullish(),
  secrets: Secrets.nullish(),
  secret_references: SecretReferences.nullish(),
  image_version: z.string().min(1).nullish(),
});
export type DeploymentCreateBody = z.infer<typeof DeploymentCreateBody>;

export const DeploymentPatchBody = z.strictObject({
  revision_source: z.enum(["repohost", "internal_container", "internal_source"]).nullish(),
  source_config: SourceConfig.nullish(),
  source_revision_config: SourceRevisionConfigInput.nullish(),
  secrets: Secrets.nullish(),
  secret_references: SecretReferences.nullish(),
  image_version: z.string().min(1).nullish(),
});
export type DeploymentPatchBody = z.infer<typeof DeploymentPatchBody>;

export const K8sComputeConfig = z.strictObject({ k8s_namespaces: z.array(z.string().min(1)).nullish() });

export const ListenerCreateBody = z.strictObject({
  compute_type: z.string().min(1).describe(
    "The listener type: one a compute plugin of the control plane declares (built in: `local`, `k8s`); " +
      "an unknown one is refused with 422 naming the known types",
  ),
  compute_id: z.string().min(1).max(253),
  compute_config: z.record(z.string(), z.unknown()).nullish(),
  version: z.string().min(1).nullish(),
});

/** `PATCH /v2/listeners/{id}`: only `version` and `compute_config`; the rest never change. */
export const ListenerPatchBody = z.strictObject({
  version: z.string().min(1).nullish(),
  compute_config: z.record(z.string(), z.unknown()).nullish(),
});

export const TokenMetadataBody = z.strictObject({
  provider_account_label: z.string().min(1).max(200).optional(),
  is_default: z.boolean().optional(),
});

/** Turns zod issues into the 422 `detail` list: `{loc, msg, type}`. */
export function issuesToDetail(
  issues: readonly z.core.$ZodIssue[],
  root: string,
): Array<{ loc: Array<string | number>; msg: string; type: string }> {
  return issues.map((i) => ({
    loc: [root, ...i.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: i.message,
    type: i.code,
  }));
}
