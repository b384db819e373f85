/**
 * Deployment operations behind the API: create (with its first revision and tracing
 * project), patch (a new revision only when `source_revision_config` or `secrets` change),
 * delete, and redeploy an earlier revision. Each runs in one transaction; the reconciler is
 * told afterwards.
 */
import { randomUUID } from "node:crypto";
import type { AtRestEncryption, SqlDriver, SqlExecutor } from "../storage/index.ts";
import { agentcliError, DeploymentBeingDeleted, DeploymentNameTaken, RevisionNeverServed } from "../kernel/index.ts";
import { invalid, invalidField, notFound } from "./api/api-error.ts";
import type { DeploymentRow, RevisionRelease } from "./api/resources.ts";
import { setRevisionRelease, setRollbackOf } from "./store/release.ts";
import type {
  DeploymentCreateBody,
  DeploymentPatchBody,
  Source,
  SourceConfig,
  SourceRevisionConfig,
} from "./api/schema.ts";
import { checkSource, type PlatformMode } from "./api/source-rules.ts";
import {
  deploymentNameTaken,
  getDeployment,
  insertDeployment,
  linkTracingProject,
  updateDeployment,
} from "./store/deployments.ts";
import { getRevision, insertLatestRevision, insertRevision } from "./store/revisions.ts";
import { getListener } from "./store/tenancy.ts";
import type { AgentTemplate } from "./reconciler/templates.ts";
import { openSecrets, sealSecrets } from "./store/secrets-at-rest.ts";

export interface DeploymentContext {
  sql: SqlDriver;
  /** Seals secret values before they are stored (./store/secrets-at-rest.ts). */
  encryption: AtRestEncryption;
  tenantId: string;
  mode: PlatformMode;
  templates: readonly AgentTemplate[];
}

function stripNullish<T extends Record<string, unknown>>(o: T | null | undefined): T {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined && v !== null)) as T;
}

async function isRemote(db: SqlExecutor, tenantId: string, sc: SourceConfig): Promise<boolean> {
  if (!sc.listener_id) return false;
  return (await getListener(db, tenantId, sc.listener_id))?.compute_type === "k8s";
}

/** Creates a deployment; returns it and the id of its first revision (null for an `internal_source` awaiting its upload). */
export async function createDeployment(
  ctx: DeploymentContext,
  body: DeploymentCreateBody & { tag_value_ids?: string[] },
): Promise<{ deployment: DeploymentRow; revisionId: string | null }> {
  const sourceConfig = stripNullish(body.source_config) as SourceConfig;
  const sourceRevisionConfig = stripNullish(body.source_revision_config) as SourceRevisionConfig;
  const makesRevision = !(body.source === "internal_source" && !sourceRevisionConfig.source_tarball_path);
  return ctx.sql.transaction(async (tx) => {
    const errors = await checkSource({
      db: tx,
      tenantId: ctx.tenantId,
      mode: ctx.mode,
      templates: ctx.templates,
      source: body.source,
      revisionSource: makesRevision ? body.source : null,
      sourceConfig,
      sourceRevisionConfig,
      secretReferences: body.secret_references,
      secrets: body.secrets ?? [],
      creating: true,
    });
    const sealed = sealSecrets(ctx.encryption, body.secrets ?? []);
    if (errors.length) throw invalid(errors);
    if (await deploymentNameTaken(tx, ctx.tenantId, body.name)) {
      throw agentcliError(DeploymentNameTaken, { name: body.name });
    }
    const id = randomUUID();
    const remote = await isRemote(tx, ctx.tenantId, sourceConfig);
    await insertDeployment(tx, {
      id,
      tenantId: ctx.tenantId,
      name: body.name,
      source: body.source,
      sourceConfig,
      sourceRevisionConfig,
      secrets: sealed,
      secretReferences: body.secret_references ?? null,
      imageVersion: body.image_version ?? null,
      remoteReconciled: remote,
      tagValueIds: body.tag_value_ids ?? [],
    });
    await linkTracingProject(tx, { id: randomUUID(), tenantId: ctx.tenantId, name: body.name, deploymentId: id });
    let revisionId: string | null = null;
    if (makesRevision) {
      revisionId = randomUUID();
      await insertLatestRevision(tx, {
        id: revisionId,
        deploymentId: id,
        tenantId: ctx.tenantId,
        source: body.source,
        sourceRevisionConfig,
        secrets: sealed,
        remoteReconciled: remote,
      });
    }
    return { deployment: (await getDeployment(tx, ctx.tenantId, id))!, revisionId };
  });
}

function sameSecrets(a: Array<{ name: string; value: string }>, b: Array<{ name: string; value: string }>): boolean {
  const key = (s: Array<{ name: string; value: string }>) =>
    JSON.stringify([...s].sort((x, y) => x.name.localeCompare(y.name)));
  return key(a) === key(b);
}

function sameConfig(a: SourceRevisionConfig, b: SourceRevisionConfig): boolean {
  const norm = (c: SourceRevisionConfig) =>
    JSON.stringify(Object.entries(stripNullish(c)).filter(([k]) => k !== "repo_commit_sha").sort());
  return norm(a) === norm(b);
}

/** Patches a deployment; a new revision is made when the revision config or the secrets change. */
export async function patchDeployment(
  ctx: DeploymentContext,
  id: string,
  body: DeploymentPatchBody & { tag_value_ids?: string[]; release?: RevisionRelease | null },
): Promise<{ deployment: DeploymentRow; revisionId: string | null }> {
  return ctx.sql.transaction(async (tx) => {
    const current = await getDeployment(tx, ctx.tenantId, id);
    if (!current) throw notFound("deployment", id);
    if (current.status === "AWAITING_DELETE") {
      throw agentcliError(DeploymentBeingDeleted, { action: "patch", name: current.name });
    }
    const sourceConfig = body.source_config
      ? stripNullish({ ...current.source_config, ...body.source_config }) as SourceConfig
      : current.source_config;
    const revisionSource: Source = body.revision_source ?? current.source;
    const base: SourceRevisionConfig = revisionSource === (await latestSource(tx, current))
      ? current.source_revision_config
      : {};
    const { repo_commit_sha: _sha, ...baseInput } = base;
    const sourceRevisionConfig = body.source_revision_config
      ? stripNullish({ ...baseInput, ...body.source_revision_config }) as SourceRevisionConfig
      : baseInput;
    const secrets = body.secrets ?? openSecrets(ctx.encryption, current.secrets);
    const sealed = body.secrets ? sealSecrets(ctx.encryption, body.secrets) : current.secrets;
    const configChanged = body.source_revision_config != null && !sameConfig(sourceRevisionConfig, base);
    const makesRevision = configChanged ||
      (body.secrets != null && !sameSecrets(secrets, openSecrets(ctx.encryption, current.secrets))) ||
      (body.revision_source != null && body.revision_source !== current.source && body.source_revision_config != null);
    const secretReferences = body.secret_references !== undefined && body.secret_references !== null
      ? body.secret_references
      : current.secret_references;
    const errors = await checkSource({
      db: tx,
      tenantId: ctx.tenantId,
      mode: ctx.mode,
      templates: ctx.templates,
      source: current.source,
      revisionSource: makesRevision ? revisionSource : null,
      sourceConfig,
      sourceRevisionConfig,
      secretReferences,
      secrets,
      creating: false,
    });
    if (errors.length) throw invalid(errors);
    const remote = await isRemote(tx, ctx.tenantId, sourceConfig);
    let revisionId: string | null = null;
    if (makesRevision) {
      revisionId = randomUUID();
      await insertRevision(tx, {
        id: revisionId,
        deploymentId: id,
        tenantId: ctx.tenantId,
        source: revisionSource,
        sourceRevisionConfig,
        secrets: sealed,
        remoteReconciled: remote,
      });
      if (body.release) await setRevisionRelease(tx, revisionId, body.release);
    } else if (body.release) {
      throw invalidField(["body", "release"], "applies to a new revision: send it with a new source_revision_config");
    }
    await updateDeployment(tx, id, {
      source_config: sourceConfig,
      source_revision_config: makesRevision ? sourceRevisionConfig : undefined,
      secrets: body.secrets ? sealed : undefined,
      secret_references: body.secret_references ?? undefined,
      image_version: body.image_version ?? undefined,
      tag_value_ids: body.tag_value_ids,
      remote_reconciled: remote,
      latest_revision_id: revisionId ?? undefined,
    });
    return { deployment: (await getDeployment(tx, ctx.tenantId, id))!, revisionId };
  });
}

async function latestSource(db: SqlExecutor, d: DeploymentRow): Promise<Source> {
  if (!d.latest_revision_id) return d.source;
  return (await getRevision(db, d.id, d.latest_revision_id))?.source ?? d.source;
}

/** Rolls back: a new revision with an earlier revision's source, config and secrets (its build is reused when kept). */
export async function redeployRevision(
  ctx: DeploymentContext,
  id: string,
  revisionId: string,
): Promise<{ deployment: DeploymentRow; revisionId: string }> {
  return ctx.sql.transaction(async (tx) => {
    const current = await getDeployment(tx, ctx.tenantId, id);
    if (!current) throw notFound("deployment", id);
    if (current.status === "AWAITING_DELETE") {
      throw agentcliError(DeploymentBeingDeleted, { action: "redeploy", name: current.name });
    }
    const earlier = await getRevision(tx, id, revisionId);
    if (!earlier) throw notFound("revision", revisionId);
    // DEPLOYED (serving) or superseded after serving (INTERRUPTED with deployed_at).
    if (!earlier.deployed_at) {
      throw agentcliError(RevisionNeverServed, { revision: revisionId, status: earlier.status });
    }
    const newId = randomUUID();
    await insertRevision(tx, {
      id: newId,
      deploymentId: id,
      tenantId: ctx.tenantId,
      source: earlier.source,
      sourceRevisionConfig: earlier.source_revision_config,
      secrets: earlier.secrets,
      remoteReconciled: earlier.remote_reconciled,
      artifactPath: earlier.artifact_path,
    });
    await setRollbackOf(tx, newId, earlier.id);
    await updateDeployment(tx, id, {
      latest_revision_id: newId,
      source_revision_config: earlier.source_revision_config,
      secrets: earlier.secrets,
    });
    return { deployment: (await getDeployment(tx, ctx.tenantId, id))!, revisionId: newId };
  });
}
