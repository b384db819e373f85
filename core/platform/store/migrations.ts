/**
 * The control plane's tables, all prefixed `platform_`, applied with `migrate(sql, "platform", ...)`.
 * Every resource row carries its `tenant_id`; every query filters on it.
 */
import type { Migration } from "../../storage/index.ts";

export const PLATFORM_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "init",
    up: `
CREATE TABLE IF NOT EXISTS platform_tenants (
  id uuid PRIMARY KEY, name text NOT NULL UNIQUE, created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS platform_api_keys (
  id uuid PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  user_id text NOT NULL, key_hash text NOT NULL UNIQUE, prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(), revoked_at timestamptz
);
CREATE TABLE IF NOT EXISTS platform_settings (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS platform_listeners (
  id uuid PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  compute_type text NOT NULL, compute_id text NOT NULL, compute_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  version text, kubeconfig text,
  created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, compute_id)
);
CREATE TABLE IF NOT EXISTS platform_integrations (
  id uuid PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  kind text NOT NULL, api_url text NOT NULL, token text NOT NULL, webhook_secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS platform_tokens (
  id text PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  owner_user_id text NOT NULL, provider_id text NOT NULL, provider_account_label text NOT NULL DEFAULT '',
  scopes jsonb NOT NULL DEFAULT '[]'::jsonb, is_default boolean NOT NULL DEFAULT false,
  expires_at timestamptz, created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS platform_tracing_projects (
  id uuid PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  name text NOT NULL, deployment_id uuid, created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (tenant_id, name)
);
CREATE TABLE IF NOT EXISTS platform_deployments (
  id uuid PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  name text NOT NULL, source text NOT NULL,
  source_config jsonb NOT NULL DEFAULT '{}'::jsonb, source_revision_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  secrets jsonb NOT NULL DEFAULT '[]'::jsonb, secret_references jsonb,
  status text NOT NULL, latest_revision_id uuid, active_revision_id uuid, image_version text,
  remote_reconciled boolean NOT NULL DEFAULT false, tag_value_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
  url text, status_message text,
  created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, name)
);
CREATE TABLE IF NOT EXISTS platform_revisions (
  id uuid PRIMARY KEY, seq bigserial, deployment_id uuid NOT NULL REFERENCES platform_deployments(id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL, status text NOT NULL, source text NOT NULL,
  source_revision_config jsonb NOT NULL DEFAULT '{}'::jsonb, secrets jsonb NOT NULL DEFAULT '[]'::jsonb,
  remote_reconciled boolean NOT NULL DEFAULT false, status_message text, artifact_path text,
  created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS platform_revisions_by_deployment ON platform_revisions (deployment_id, seq DESC);
CREATE TABLE IF NOT EXISTS platform_revision_logs (
  id bigserial PRIMARY KEY, revision_id uuid NOT NULL REFERENCES platform_revisions(id) ON DELETE CASCADE,
  kind text NOT NULL, message text NOT NULL, at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS platform_revision_logs_by_revision ON platform_revision_logs (revision_id, id);
CREATE TABLE IF NOT EXISTS platform_objects (
  object_path text PRIMARY KEY, tenant_id uuid NOT NULL, deployment_id uuid NOT NULL,
  bytes bytea, size integer, created_at timestamptz NOT NULL DEFAULT now()
)`,
  },
  {
    version: 2,
    name: "reconcile-leases",
    up: `
CREATE TABLE IF NOT EXISTS platform_reconcile_leases (
  deployment_id uuid PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS platform_revisions_by_status ON platform_revisions (status)`,
  },
  {
    version: 3,
    name: "sandboxes",
    up: `
CREATE TABLE IF NOT EXISTS platform_sandboxes (
  id uuid PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  name text NOT NULL, status text NOT NULL, status_message text, image text NOT NULL,
  runtime text NOT NULL, listener_id uuid, created_by_deployment uuid,
  idle_ttl_seconds integer NOT NULL, delete_after_stop_seconds integer NOT NULL,
  vcpus integer, mem_bytes bigint, fs_capacity_bytes bigint,
  created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(), stopped_at timestamptz,
  UNIQUE (tenant_id, name)
);
ALTER TABLE platform_api_keys ADD COLUMN IF NOT EXISTS deployment_id uuid`,
  },
  {
    version: 4,
    name: "sandbox-snapshots",
    up: `
CREATE TABLE IF NOT EXISTS platform_sandbox_snapshots (
  id uuid PRIMARY KEY, tenant_id uuid NOT NULL REFERENCES platform_tenants(id) ON DELETE CASCADE,
  name text NOT NULL, docker_image text NOT NULL, fs_capacity_bytes bigint,
  source_sandbox_id uuid, files bytea, files_size bigint,
  created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, name)
);
ALTER TABLE platform_sandboxes ADD COLUMN IF NOT EXISTS snapshot_id uuid`,
  },
  {
    version: 5,
    name: "sandbox-runtime-ref",
    up: `ALTER TABLE platform_sandboxes ADD COLUMN IF NOT EXISTS runtime_ref text`,
  },
  {
    version: 6,
    name: "superseded-revisions",
    // A revision that served once keeps deployed_at (rollback may return to it); one that a newer
    // revision replaced is INTERRUPTED, not DEPLOYED (docs/control-plane.md, "Revision statuses").
    up: `
ALTER TABLE platform_revisions ADD COLUMN IF NOT EXISTS deployed_at timestamptz;
UPDATE platform_revisions SET deployed_at = updated_at WHERE status = 'DEPLOYED' AND deployed_at IS NULL;
UPDATE platform_revisions r SET status = 'INTERRUPTED', status_message = 'superseded by revision ' || d.active_revision_id
  FROM platform_deployments d
  WHERE r.deployment_id = d.id AND r.status = 'DEPLOYED' AND d.active_revision_id IS NOT NULL AND r.id <> d.active_revision_id`,
  },
  {
    version: 7,
    name: "release-safety",
    // Issue 37: a revision's gates and canary share (`release`), the revision a rollback copied
    // (`rollback_of`), and the deployment's running canary (docs/control-plane.md, "Release safety").
    up: `
ALTER TABLE platform_revisions ADD COLUMN IF NOT EXISTS release jsonb;
ALTER TABLE platform_revisions ADD COLUMN IF NOT EXISTS rollback_of uuid;
ALTER TABLE platform_deployments ADD COLUMN IF NOT EXISTS canary_revision_id uuid;
ALTER TABLE platform_deployments ADD COLUMN IF NOT EXISTS canary_percent integer`,
  },
  {
    version: 8,
    name: "canary-threads",
    // Issue 37: the threads a running canary took, so a control-plane restart (or another
    // replica, or a router) sends each one's later turns to the same revision. Deleted when
    // the canary ends (promote, abort, superseded).
    up: `
CREATE TABLE IF NOT EXISTS platform_canary_threads (
  deployment_id uuid NOT NULL REFERENCES platform_deployments(id) ON DELETE CASCADE,
  thread_id text NOT NULL, revision_id uuid NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (deployment_id, thread_id)
)`,
  },
  {
    version: 9,
    name: "revision-packages",
    // The folder of npm packages (`<data-dir>/packages/<key>`) a revision's build installed or
    // reused: '' none, NULL not recorded yet (built before this). The sweep of old installs
    // keeps those a revision the control plane may still run or roll back to names.
    up: `ALTER TABLE platform_revisions ADD COLUMN IF NOT EXISTS packages_key text`,
  },
];
