/**
 * `/v2/deployments`: create, list, read, patch, delete (extension), upload URLs (extension),
 * revisions (list, read, logs, redeploy), usage (extension: the deployment's, ./usage.ts).
 */
import { Hono } from "hono";
import { z } from "zod";
import { agentcliError, DeploymentBeingDeleted } from "../../kernel/index.ts";
import { invalidField, notFound } from "../api/api-error.ts";
import type { PlatformEnv, PlatformServices } from "../api/context.ts";
import { createDeployment, type DeploymentContext, patchDeployment, redeployRevision } from "../deployments.ts";
import { streamLogs } from "./logs.ts";
import { deploymentFilters, readBody, revisionFilters } from "../api/request.ts";
import { deploymentResource, revisionResource } from "../api/resources.ts";
import { DeploymentCreateBody, DeploymentPatchBody } from "../api/schema.ts";
import { getDeployment, listDeployments, updateDeployment } from "../store/deployments.ts";
import { reserveObject } from "../store/objects.ts";
import { getRevision, listRevisions } from "../store/revisions.ts";
import { signUpload } from "./uploads.ts";
import { deploymentUsage } from "./usage.ts";
import { ReleaseBody, releaseRoutes, RollbackBody } from "./release.ts";

const Tags = z.object({ tag_value_ids: z.array(z.uuid()).optional() });
const CreateBody = DeploymentCreateBody.extend(Tags.shape);
const PatchBody = DeploymentPatchBody.extend({
  ...Tags.shape,
  release: ReleaseBody.nullish().describe(
    "Issue 37: gates and canary share of the revision this patch makes (docs/control-plane.md, Release safety)",
  ),
});
/** The request bodies of create, patch and the release routes, for the control plane's OpenAPI document (../api/openapi.ts). */
export const DEPLOYMENT_BODIES = { CreateBody, PatchBody, RollbackBody };

export function deploymentRoutes(s: PlatformServices): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  const ctx = (tenantId: string): DeploymentContext => ({
    sql: s.sql,
    encryption: s.encryption,
    tenantId,
    mode: s.mode,
    templates: s.templates,
  });
  const load = async (tenantId: string, id: string) => {
    const d = await getDeployment(s.sql, tenantId, id);
    if (!d) throw notFound("deployment", id);
    return d;
  };

  app.post("/", async (c) => {
    const body = await readBody(c, CreateBody);
    const { deployment } = await createDeployment(ctx(c.var.caller.tenantId), body);
    s.reconciler.notify(deployment.id);
    return c.json(deploymentResource(deployment), 201);
  });

  app.get("/", async (c) => {
    const f = deploymentFilters(c);
    const rows = await listDeployments(s.sql, c.var.caller.tenantId, f);
    return c.json({ resources: rows.map(deploymentResource), offset: f.offset + rows.length });
  });

  app.get(
    "/:deployment_id",
    async (c) => c.json(deploymentResource(await load(c.var.caller.tenantId, c.req.param("deployment_id")))),
  );

  app.patch("/:deployment_id", async (c) => {
    const body = await readBody(c, PatchBody, ["name", "source", "id", "tenant_id"]);
    if (body.source_config?.template != null) {
      const current = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
      if (body.source_config.template !== current.source_config.template) {
        throw invalidField(
          ["body", "source_config", "template"],
          "cannot be changed after creation; create a deployment from the other template",
          "immutable",
        );
      }
    }
    const { deployment, revisionId } = await patchDeployment(
      ctx(c.var.caller.tenantId),
      c.req.param("deployment_id"),
      body,
    );
    if (revisionId) s.reconciler.notify(deployment.id);
    return c.json(deploymentResource(deployment));
  });

  app.delete("/:deployment_id", async (c) => {
    const d = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
    await updateDeployment(s.sql, d.id, { status: "AWAITING_DELETE" });
    s.reconciler.interrupt(d.id);
    s.reconciler.notify(d.id);
    return c.json(deploymentResource({ ...d, status: "AWAITING_DELETE" }), 202);
  });

  app.post("/:deployment_id/upload-url", async (c) => {
    const d = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
    if (d.status === "AWAITING_DELETE") {
      throw agentcliError(DeploymentBeingDeleted, { action: "upload to", name: d.name });
    }
    const objectPath = `uploads/${d.id}/${crypto.randomUUID()}.bundle`;
    await reserveObject(s.sql, { objectPath, tenantId: d.tenant_id, deploymentId: d.id });
    const base = s.publicUrl ?? new URL(c.req.url).origin;
    return c.json(
      { upload_url: signUpload({ base, objectPath, secret: s.uploadSecret }), object_path: objectPath },
      201,
    );
  });

  app.get("/:deployment_id/usage", async (c) => {
    const deployment = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
    return deploymentUsage(c, { deployment, encryption: s.encryption });
  });

  app.get("/:deployment_id/revisions", async (c) => {
    const d = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
    const f = revisionFilters(c);
    const rows = await listRevisions(s.sql, d.id, f);
    return c.json({ resources: rows.map(revisionResource), offset: f.offset + rows.length });
  });

  app.get("/:deployment_id/revisions/:revision_id", async (c) => {
    const d = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
    const r = await getRevision(s.sql, d.id, c.req.param("revision_id"));
    if (!r) throw notFound("revision", c.req.param("revision_id"));
    return c.json(revisionResource(r));
  });

  app.get("/:deployment_id/revisions/:revision_id/logs", async (c) => {
    const d = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
    const r = await getRevision(s.sql, d.id, c.req.param("revision_id"));
    if (!r) throw notFound("revision", c.req.param("revision_id"));
    return streamLogs(c, s.sql, r);
  });

  app.post("/:deployment_id/revisions/:revision_id/redeploy", async (c) => {
    const { deployment, revisionId } = await redeployRevision(
      ctx(c.var.caller.tenantId),
      c.req.param("deployment_id"),
      c.req.param("revision_id"),
    );
    s.reconciler.notify(deployment.id);
    return c.json(revisionResource((await getRevision(s.sql, deployment.id, revisionId))!), 201);
  });

  app.route("/", releaseRoutes(s, ctx));
  return app;
}
