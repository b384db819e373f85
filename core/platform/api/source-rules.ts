/**
 * The per-source requirement matrix (spec 2.9-2.11), which the spec leaves unshown; ours:
 *
 * | source               | needs                                                    | mode        |
 * |----------------------|----------------------------------------------------------|-------------|
 * | `repohost`           | `integration_id` (an integration), `repo_url`, `repo_ref` | cloud       |
 * | `external_container` | `image_uri`, `listener_id` (a listener)                  | self-hosted |
 * | `internal_container` | `image_uri`                                              | cloud       |
 * | `internal_source`    | `source_tarball_path` naming an upload of this tenant    | cloud       |
 * | `internal_template`  | `source_config.template` (a known template, its secrets) | cloud       |
 *
 * A field that belongs to another source is refused, so a mistaken body fails loudly;
 * `secret_references` belongs to `external_container` alone.
 */
import type { SqlExecutor } from "../../storage/index.ts";
import type { FieldError } from "./api-error.ts";
import { getObject } from "../store/objects.ts";
import { getIntegration, getListener } from "../store/tenancy.ts";
import type { SecretReference, Source, SourceConfig, SourceRevisionConfig } from "./schema.ts";
import type { AgentTemplate } from "../reconciler/templates.ts";

export type PlatformMode = "self-hosted" | "cloud";

const CLOUD_ONLY: ReadonlySet<Source> = new Set([
  "repohost",
  "internal_container",
  "internal_source",
  "internal_template",
]);

/** Which sources a `source_config` / `source_revision_config` field belongs to (absent: all). */
const CONFIG_OWNERS: Record<string, Source[]> = {
  integration_id: ["repohost"],
  repo_url: ["repohost"],
  build_on_push: ["repohost"],
  template: ["internal_template"],
};
const REVISION_OWNERS: Record<string, Source[]> = {
  repo_ref: ["repohost"],
  image_uri: ["external_container", "internal_container"],
  source_tarball_path: ["internal_source"],
  graph_config_path: ["repohost", "internal_source"],
};

export function sourceAllowed(source: Source, mode: PlatformMode): string | null {
  if (mode === "self-hosted" && CLOUD_ONLY.has(source)) {
    return `source "${source}" is only for cloud deployments; this control plane runs in self-hosted mode`;
  }
  if (mode === "cloud" && source === "external_container") {
    return `source "external_container" is only for self-hosted deployments; this control plane runs in cloud mode`;
  }
  return null;
}

const present = (v: unknown) => v !== undefined && v !== null && v !== "";

export interface SourceCheck {
  db: SqlExecutor;
  tenantId: string;
  mode: PlatformMode;
  templates: readonly AgentTemplate[];
  /** The deployment's source (owns `source_config`). */
  source: Source;
  /** The source of the revision being made (owns `source_revision_config`); absent when no revision is made. */
  revisionSource: Source | null;
  sourceConfig: SourceConfig;
  sourceRevisionConfig: SourceRevisionConfig;
  secretReferences: SecretReference[] | null | undefined;
  /** The secrets the revision would carry. */
  secrets: ReadonlyArray<{ name: string; value: string }>;
  /** When the deployment is being created: `internal_source` may be created before its first upload. */
  creating: boolean;
}

/** Records one broken rule: where (under `body`), what, and its type. */
type Report = (loc: Array<string | number>, msg: string, type?: string) => void;

/** Every rule broken by the effective configuration, as 422 field errors. */
export async function checkSource(c: SourceCheck): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const err: Report = (loc, msg, type = "value_error") => errors.push({ loc: ["body", ...loc], msg, type });
  fieldRules(c, err);
  if (c.source === "repohost") await repohostRules(c, err);
  if (c.source === "external_container" && !present(c.sourceConfig.listener_id)) {
    err(
      ["source_config", "listener_id"],
      'is required for source "external_container": name the listener that runs it',
      "missing",
    );
  }
  if (c.source === "internal_template") templateRules(c, err);
  if (present(c.sourceConfig.listener_id)) await listenerRules(c, err);
  if (c.revisionSource) await revisionRules(c, err);
  return errors;
}

/** The sources the mode allows, and the fields that belong to another source. */
function fieldRules(c: SourceCheck, err: Report): void {
  const modeProblem = sourceAllowed(c.source, c.mode);
  if (modeProblem) err(["source"], modeProblem, "source_not_allowed");
  if (c.revisionSource && c.revisionSource !== c.source) {
    const p = sourceAllowed(c.revisionSource, c.mode);
    if (p) err(["revision_source"], p, "source_not_allowed");
  }
  for (const [field, owners] of Object.entries(CONFIG_OWNERS)) {
    if (present((c.sourceConfig as Record<string, unknown>)[field]) && !owners.includes(c.source)) {
      err(
        ["source_config", field],
        `applies only to source ${owners.map((o) => `"${o}"`).join(", ")}, not "${c.source}"`,
        "field_not_allowed",
      );
    }
  }
  const rs = c.revisionSource ?? c.source;
  for (const [field, owners] of Object.entries(REVISION_OWNERS)) {
    if (present((c.sourceRevisionConfig as Record<string, unknown>)[field]) && !owners.includes(rs)) {
      err(
        ["source_revision_config", field],
        `applies only to source ${owners.map((o) => `"${o}"`).join(", ")}, not "${rs}"`,
        "field_not_allowed",
      );
    }
  }
  if (c.secretReferences?.length && c.source !== "external_container") {
    err(["secret_references"], `applies only to source "external_container", not "${c.source}"`, "field_not_allowed");
  }
}

/** `repohost`: an integration of the tenant and a repository url. */
async function repohostRules(c: SourceCheck, err: Report): Promise<void> {
  const sc = c.sourceConfig;
  if (!present(sc.integration_id)) {
    err(
      ["source_config", "integration_id"],
      'is required for source "repohost" (the host_integration_id of a repository listing)',
      "missing",
    );
  } else if (!(await getIntegration(c.db, c.tenantId, sc.integration_id!))) {
    err(["source_config", "integration_id"], `integration "${sc.integration_id}" not found`, "not_found");
  }
  if (!present(sc.repo_url)) {
    err(
      ["source_config", "repo_url"],
      'is required for source "repohost" (the url of a repository listing)',
      "missing",
    );
  }
}

/** `internal_template`: a known template and, for a new revision, the secrets it needs. */
function templateRules(c: SourceCheck, err: Report): void {
  const sc = c.sourceConfig;
  const known = c.templates.length
    ? `one of ${c.templates.map((t) => `"${t.name}"`).join(", ")} (GET /v2/templates)`
    : "this control plane has no templates";
  const template = present(sc.template) ? c.templates.find((t) => t.name === sc.template) : undefined;
  if (!present(sc.template)) {
    err(["source_config", "template"], `is required for source "internal_template": ${known}`, "missing");
  } else if (!template) {
    err(["source_config", "template"], `unknown template "${sc.template}": ${known}`, "not_found");
  } else if (c.revisionSource) {
    const names = new Set(c.secrets.filter((s) => s.value !== "").map((s) => s.name));
    const missing = template.requiredSecrets.filter((n) => !names.has(n));
    if (missing.length) {
      err(
        ["secrets"],
        `template "${template.name}" needs the secret${missing.length > 1 ? "s" : ""} ${missing.join(", ")}${
          missing.includes("PLATFORM_API_KEY") ? " (the key clients send as x-api-key to the deployed agent)" : ""
        }`,
        "missing",
      );
    }
  }
}

/** A named listener: one of the tenant's, and a namespace it allows. */
async function listenerRules(c: SourceCheck, err: Report): Promise<void> {
  const sc = c.sourceConfig;
  const listener = await getListener(c.db, c.tenantId, sc.listener_id!);
  if (!listener) err(["source_config", "listener_id"], `listener "${sc.listener_id}" not found`, "not_found");
  else {
    const namespaces = (listener.compute_config.k8s_namespaces as string[] | null | undefined) ?? null;
    const ns = sc.listener_config?.k8s_namespace;
    if (ns && namespaces && namespaces.length && !namespaces.includes(ns)) {
      err(
        ["source_config", "listener_config", "k8s_namespace"],
        `"${ns}" is not one of the listener's k8s_namespaces (${namespaces.join(", ")})`,
      );
    }
  }
}

/** A new revision: what its source needs in `source_revision_config`. */
async function revisionRules(c: SourceCheck, err: Report): Promise<void> {
  const rs = c.revisionSource ?? c.source;
  const src = c.sourceRevisionConfig;
  if (rs === "repohost" && !present(src.repo_ref)) {
    err(
      ["source_revision_config", "repo_ref"],
      'is required for source "repohost" (the default_branch of a repository listing)',
      "missing",
    );
  }
  if ((rs === "external_container" || rs === "internal_container") && !present(src.image_uri)) {
    err(["source_revision_config", "image_uri"], `is required for source "${rs}"`, "missing");
  }
  if (rs === "internal_source") await uploadRules(c, err);
}

/** `internal_source`: a filled upload of this tenant (none yet while the deployment is created). */
async function uploadRules(c: SourceCheck, err: Report): Promise<void> {
  const src = c.sourceRevisionConfig;
  if (!present(src.source_tarball_path)) {
    if (!c.creating) {
      err(
        ["source_revision_config", "source_tarball_path"],
        'is required for source "internal_source": upload the bundle first (POST /v2/deployments/{id}/upload-url)',
        "missing",
      );
    }
    return;
  }
  const object = await getObject(c.db, src.source_tarball_path!);
  if (!object || object.tenant_id !== c.tenantId) {
    err(
      ["source_revision_config", "source_tarball_path"],
      `"${src.source_tarball_path}" is not an upload of this tenant`,
      "not_found",
    );
  } else if (!object.bytes) {
    err(
      ["source_revision_config", "source_tarball_path"],
      `"${src.source_tarball_path}" has no bytes yet: PUT the bundle to its upload_url first`,
      "upload_incomplete",
    );
  }
}
