/**
 * Tenants, their API keys, provider tokens, repository integrations and listeners: what the
 * `agentcli platform admin ...` commands create and what `X-Api-Key` resolves to. A key is
 * shown once at creation; only its sha256 is stored.
 *
 * @example
 * const t = await createTenant(sql, "acme");
 * const { key } = await createApiKey(sql, { tenantId: t.id, userId: "alice" });
 */
import { createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import type { SqlExecutor } from "../../storage/index.ts";
import { agentcliError, ListenerComputeIdTaken, TenantExists } from "../../kernel/index.ts";
import { notFound } from "../api/api-error.ts";
import type { ListenerRow, TokenRow } from "../api/resources.ts";
import { isUuid } from "./deployments.ts";

export interface Caller {
  tenantId: string;
  userId: string;
  keyId: string;
  /** Set for the key a deployment's revisions use (its sandboxes). */
  deploymentId?: string | null;
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export async function createTenant(db: SqlExecutor, name: string): Promise<{ id: string; name: string }> {
  const existing = await db.query<{ id: string }>("SELECT id FROM platform_tenants WHERE name = $1", [name]);
  if (existing.rows[0]) throw agentcliError(TenantExists, { name, id: existing.rows[0].id });
  const id = randomUUID();
  await db.query("INSERT INTO platform_tenants (id, name) VALUES ($1, $2)", [id, name]);
  return { id, name };
}

/** Finds a tenant by id or name. */
export async function findTenant(db: SqlExecutor, idOrName: string): Promise<{ id: string; name: string }> {
  const { rows } = await db.query<{ id: string; name: string }>(
    isUuid(idOrName)
      ? "SELECT id, name FROM platform_tenants WHERE id = $1"
      : "SELECT id, name FROM platform_tenants WHERE name = $1",
    [idOrName],
  );
  if (!rows[0]) throw notFound("tenant", idOrName);
  return rows[0];
}

export async function listTenants(db: SqlExecutor): Promise<Array<{ id: string; name: string }>> {
  return (await db.query<{ id: string; name: string }>("SELECT id, name FROM platform_tenants ORDER BY created_at"))
    .rows;
}

/** Creates an API key for a user of a tenant; the returned `key` is the only copy. */
export async function createApiKey(
  db: SqlExecutor,
  opts: { tenantId: string; userId: string },
): Promise<{ id: string; key: string }> {
  const id = randomUUID();
  const key = `acp_${randomBytes(24).toString("base64url")}`;
  await db.query(
    "INSERT INTO platform_api_keys (id, tenant_id, user_id, key_hash, prefix) VALUES ($1, $2, $3, $4, $5)",
    [
      id,
      opts.tenantId,
      opts.userId,
      hashKey(key),
      key.slice(0, 8),
    ],
  );
  return { id, key };
}

/**
 * The API key a deployment's revisions use for the control plane's sandboxes: derived from
 * a server secret, so it is the same on every rollout and after a restart, and registered
 * (idempotently) as a key of the deployment's tenant; deleted with the deployment.
 */
export async function deploymentApiKey(
  db: SqlExecutor,
  secret: string,
  d: { id: string; tenant_id: string },
): Promise<string> {
  const key = `acp_dep_${createHmac("sha256", secret).update(`sandbox:${d.id}`).digest("base64url")}`;
  await db.query(
    `INSERT INTO platform_api_keys (id, tenant_id, user_id, key_hash, prefix, deployment_id) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (key_hash) DO NOTHING`,
    [randomUUID(), d.tenant_id, `deployment:${d.id}`, hashKey(key), key.slice(0, 8), d.id],
  );
  return key;
}

/** Deletes the keys of a deployment (its teardown). */
export async function deleteDeploymentApiKeys(db: SqlExecutor, deploymentId: string): Promise<void> {
  await db.query("DELETE FROM platform_api_keys WHERE deployment_id = $1", [deploymentId]);
}

export async function revokeApiKey(db: SqlExecutor, id: string): Promise<void> {
  const r = await db.query("UPDATE platform_api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL", [
    id,
  ]);
  if (!r.rowCount) throw notFound("API key", id);
}

/** Resolves an `X-Api-Key` header value to its caller, or null. */
export async function authenticateKey(db: SqlExecutor, key: string): Promise<Caller | null> {
  const { rows } = await db.query<{ id: string; tenant_id: string; user_id: string; deployment_id: string | null }>(
    "SELECT id, tenant_id, user_id, deployment_id FROM platform_api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
    [hashKey(key)],
  );
  const r = rows[0];
  return r ? { tenantId: r.tenant_id, userId: r.user_id, keyId: r.id, deploymentId: r.deployment_id } : null;
}

export async function createToken(db: SqlExecutor, t: {
  tenantId: string;
  ownerUserId: string;
  providerId: string;
  label?: string;
  scopes?: string[];
  expiresAt?: Date | null;
  isDefault?: boolean;
}): Promise<TokenRow> {
  const id = `tok_${randomBytes(12).toString("hex")}`;
  if (t.isDefault) {
    await db.query(
      "UPDATE platform_tokens SET is_default = false, updated_at = now() WHERE tenant_id = $1 AND owner_user_id = $2 AND provider_id = $3 AND is_default",
      [t.tenantId, t.ownerUserId, t.providerId],
    );
  }
  const { rows } = await db.query<TokenRow>(
    `INSERT INTO platform_tokens (id, tenant_id, owner_user_id, provider_id, provider_account_label, scopes, is_default, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) RETURNING *`,
    [
      id,
      t.tenantId,
      t.ownerUserId,
      t.providerId,
      t.label ?? "",
      JSON.stringify(t.scopes ?? []),
      t.isDefault ?? false,
      t.expiresAt ?? null,
    ],
  );
  return rows[0]!;
}

export async function getToken(db: SqlExecutor, tenantId: string, id: string): Promise<TokenRow | null> {
  const { rows } = await db.query<TokenRow>("SELECT * FROM platform_tokens WHERE tenant_id = $1 AND id = $2", [
    tenantId,
    id,
  ]);
  return rows[0] ?? null;
}

export async function listTokens(db: SqlExecutor, tenantId: string, ownerUserId: string): Promise<TokenRow[]> {
  return (await db.query<TokenRow>(
    "SELECT * FROM platform_tokens WHERE tenant_id = $1 AND owner_user_id = $2 ORDER BY created_at, id",
    [tenantId, ownerUserId],
  )).rows;
}

/** Updates a token's metadata; setting `is_default` clears the owner's other default for that provider. */
export async function patchTokenMetadata(
  db: SqlExecutor,
  token: TokenRow,
  patch: { provider_account_label?: string; is_default?: boolean },
): Promise<TokenRow> {
  if (patch.is_default === true) {
    await db.query(
      "UPDATE platform_tokens SET is_default = false, updated_at = now() WHERE tenant_id = $1 AND owner_user_id = $2 AND provider_id = $3 AND id <> $4 AND is_default",
      [token.tenant_id, token.owner_user_id, token.provider_id, token.id],
    );
  }
  const { rows } = await db.query<TokenRow>(
    `UPDATE platform_tokens SET provider_account_label = COALESCE($2, provider_account_label), is_default = COALESCE($3, is_default), updated_at = now()
     WHERE id = $1 RETURNING *`,
    [token.id, patch.provider_account_label ?? null, patch.is_default ?? null],
  );
  return rows[0]!;
}

export interface IntegrationRow {
  id: string;
  tenant_id: string;
  kind: "repohost" | "forge";
  api_url: string;
  token: string;
  webhook_secret: string;
}

export async function createIntegration(
  db: SqlExecutor,
  i: { tenantId: string; kind: "repohost" | "forge"; apiUrl: string; token: string },
): Promise<IntegrationRow> {
  const id = randomUUID();
  const webhookSecret = randomBytes(20).toString("hex");
  const { rows } = await db.query<IntegrationRow>(
    "INSERT INTO platform_integrations (id, tenant_id, kind, api_url, token, webhook_secret) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
    [id, i.tenantId, i.kind, i.apiUrl.replace(/\/+$/, ""), i.token, webhookSecret],
  );
  return rows[0]!;
}

export async function getIntegration(db: SqlExecutor, tenantId: string, id: string): Promise<IntegrationRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<IntegrationRow>(
    "SELECT * FROM platform_integrations WHERE tenant_id = $1 AND id = $2",
    [tenantId, id],
  );
  return rows[0] ?? null;
}

export async function getIntegrationById(db: SqlExecutor, id: string): Promise<IntegrationRow | null> {
  if (!isUuid(id)) return null;
  return (await db.query<IntegrationRow>("SELECT * FROM platform_integrations WHERE id = $1", [id])).rows[0] ?? null;
}

export async function getListener(db: SqlExecutor, tenantId: string, id: string): Promise<ListenerRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<ListenerRow>("SELECT * FROM platform_listeners WHERE tenant_id = $1 AND id = $2", [
    tenantId,
    id,
  ]);
  return rows[0] ?? null;
}

/** A listener by id alone (the control plane's own use: a sandbox row names its listener). */
export async function getListenerById(db: SqlExecutor, id: string): Promise<ListenerRow | null> {
  return (await db.query<ListenerRow>("SELECT * FROM platform_listeners WHERE id = $1", [id])).rows[0] ?? null;
}

export async function listListeners(
  db: SqlExecutor,
  tenantId: string,
  page: { limit: number; offset: number },
): Promise<ListenerRow[]> {
  return (await db.query<ListenerRow>(
    "SELECT * FROM platform_listeners WHERE tenant_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3",
    [tenantId, page.limit, page.offset],
  )).rows;
}

export async function createListener(
  db: SqlExecutor,
  l: {
    tenantId: string;
    computeType: string;
    computeId: string;
    computeConfig: Record<string, unknown>;
    version: string | null;
  },
): Promise<ListenerRow> {
  const dup = await db.query("SELECT 1 FROM platform_listeners WHERE tenant_id = $1 AND compute_id = $2", [
    l.tenantId,
    l.computeId,
  ]);
  if (dup.rows.length) {
    throw agentcliError(ListenerComputeIdTaken, { computeId: l.computeId });
  }
  const { rows } = await db.query<ListenerRow>(
    "INSERT INTO platform_listeners (id, tenant_id, compute_type, compute_id, compute_config, version) VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING *",
    [randomUUID(), l.tenantId, l.computeType, l.computeId, JSON.stringify(l.computeConfig), l.version],
  );
  return rows[0]!;
}

export async function patchListener(
  db: SqlExecutor,
  id: string,
  p: { version?: string | null; computeConfig?: Record<string, unknown> | null },
): Promise<ListenerRow> {
  const { rows } = await db.query<ListenerRow>(
    `UPDATE platform_listeners SET version = COALESCE($2, version), compute_config = COALESCE($3::jsonb, compute_config), updated_at = now()
     WHERE id = $1 RETURNING *`,
    [id, p.version ?? null, p.computeConfig ? JSON.stringify(p.computeConfig) : null],
  );
  return rows[0]!;
}

/** Stores the kubeconfig the control plane uses to apply a `k8s` listener's manifests. */
export async function setListenerKubeconfig(db: SqlExecutor, id: string, kubeconfig: string): Promise<void> {
  const r = await db.query("UPDATE platform_listeners SET kubeconfig = $2, updated_at = now() WHERE id = $1", [
    id,
    kubeconfig,
  ]);
  if (!r.rowCount) throw notFound("listener", id);
}

/** A server-wide value (for example the upload-signing secret), created on first use. */
export async function setting(db: SqlExecutor, key: string, create: () => string): Promise<string> {
  await db.query("INSERT INTO platform_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [
    key,
    create(),
  ]);
  return (await db.query<{ value: string }>("SELECT value FROM platform_settings WHERE key = $1", [key])).rows[0]!
    .value;
}
