/**
 * Rows of the control plane's tables mapped to the API resources of spec 2.9-2.14. Secret
 * values never leave the server: responses carry each secret's name with a redacted value.
 */
import type {
  DeploymentStatus,
  RevisionStatus,
  SecretReference,
  Source,
  SourceConfig,
  SourceRevisionConfig,
} from "./schema.ts";

export const REDACTED = "********";

export interface DeploymentRow {
  id: string;
  tenant_id: string;
  name: string;
  source: Source;
  source_config: SourceConfig;
  source_revision_config: SourceRevisionConfig;
  secrets: Array<{ name: string; value: string }>;
  secret_references: SecretReference[] | null;
  status: DeploymentStatus;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version: string | null;
  remote_reconciled: boolean;
  tag_value_ids: string[];
  url: string | null;
  status_message: string | null;
  /** The revision taking a share of new threads before it serves them all (issue 37), and that share. */
  canary_revision_id?: string | null;
  canary_percent?: number | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface RevisionRow {
  id: string;
  seq: string | number;
  deployment_id: string;
  tenant_id: string;
  status: RevisionStatus;
  source: Source;
  source_revision_config: SourceRevisionConfig;
  secrets: Array<{ name: string; value: string }>;
  remote_reconciled: boolean;
  status_message: string | null;
  artifact_path: string | null;
  /** When the revision first served (reached DEPLOYED); kept after a newer one supersedes it. */
  deployed_at: Date | string | null;
  /** Its checks before traffic and its canary share (issue 37; null: none). */
  release?: RevisionRelease | null;
  /** The revision whose build a rollback serves again. */
  rollback_of?: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface ListenerRow {
  id: string;
  tenant_id: string;
  compute_type: string;
  compute_id: string;
  compute_config: Record<string, unknown>;
  version: string | null;
  kubeconfig: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface TokenRow {
  id: string;
  tenant_id: string;
  owner_user_id: string;
  provider_id: string;
  provider_account_label: string;
  scopes: unknown[];
  is_default: boolean;
  expires_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** ISO 8601 from a driver's timestamp (a Date from both pg and PGlite). */
export function iso(value: Date | string | null): string | null {
  if (value === null) return null;
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

function redact(secrets: Array<{ name: string; value: string }>): Array<{ name: string; value: string }> {
  return secrets.map((s) => ({ name: s.name, value: REDACTED }));
}

/** The Deployment resource (spec 2.9), plus `url` and `status_message` (extensions). */
export function deploymentResource(row: DeploymentRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    source: row.source,
    source_config: row.source_config,
    source_revision_config: row.source_revision_config,
    secrets: redact(row.secrets),
    secret_references: row.secret_references,
    status: row.status,
    latest_revision_id: row.latest_revision_id,
    active_revision_id: row.active_revision_id,
    image_version: row.image_version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    url: row.url,
    status_message: row.status_message,
    canary: row.canary_revision_id ? { revision_id: row.canary_revision_id, percent: row.canary_percent ?? 0 } : null,
  };
}

/** The Revision resource (spec 2.12), plus `deployment_id` and `status_message` (the readable reason). */
export function revisionResource(row: RevisionRow) {
  return {
    id: row.id,
    deployment_id: row.deployment_id,
    status: row.status,
    source: row.source,
    source_revision_config: row.source_revision_config,
    status_message: row.status_message,
    release: releaseView(row.release ?? null),
    rollback_of: row.rollback_of ?? null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The Listener resource (spec 2.13). The kubeconfig is a server-side credential, never shown. */
export function listenerResource(row: ListenerRow) {
  return {
    id: row.id,
    compute_type: row.compute_type,
    compute_id: row.compute_id,
    compute_config: row.compute_config,
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The Token resource (spec 2.14). */
export function tokenResource(row: TokenRow) {
  return {
    id: row.id,
    provider_id: row.provider_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    expires_at: iso(row.expires_at),
    provider_account_label: row.provider_account_label,
    scopes: row.scopes,
    is_default: row.is_default,
  };
}

/** Revision states after which nothing more happens to a revision. */
export const TERMINAL_REVISION_STATUSES: ReadonlySet<RevisionStatus> = new Set([
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "DEPLOYED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
]);

/** A revision's release settings as stored: its gates (the eval cases in full) and its canary share. */
export interface RevisionRelease {
  gates?: { smoke?: boolean | null; evals?: Array<Record<string, unknown>> | null } | null;
  canary_percent?: number | null;
}

/** The release settings as the API shows them: eval cases by name only. */
function releaseView(r: RevisionRelease | null) {
  if (!r) return null;
  const evals = r.gates?.evals ?? null;
  return {
    gates: {
      ok: true,
      smoke: r.gates?.smoke ?? false,
      evals: evals ? evals.map((c) => String(c.name ?? "")) : null,
    },
    canary_percent: r.canary_percent ?? null,
  };
}
