/**
 * Release safety on `/v2/deployments/{id}` (issue 37; extensions beside spec 4.3): the
 * `release` field of a revision-making PATCH (gates, canary share), rollback to an earlier
 * revision, and promote or abort of a running canary.
 */
import { Hono } from "hono";
import { z } from "zod";
import { evalCaseSchema } from "../evals/case-schema.ts";
import { notFound } from "../api/api-error.ts";
import type { PlatformEnv, PlatformServices } from "../api/context.ts";
import { type DeploymentContext, redeployRevision } from "../deployments.ts";
import { readBody } from "../api/request.ts";
import { deploymentResource, revisionResource } from "../api/resources.ts";
import { getDeployment } from "../store/deployments.ts";
import { getRevision } from "../store/revisions.ts";

/** An eval case as `agentcli deploy --gate-evals` sends it (read from the project's evals/). */
const GateCase = evalCaseSchema.extend({
  name: z.string().min(1),
  file: z.string().optional(),
  checkLines: z.array(z.number().int()).optional(),
});

/** `release` of `PATCH /v2/deployments/{id}`: what the revision this patch makes must pass, and its canary share. */
export const ReleaseBody = z.strictObject({
  gates: z.strictObject({
    smoke: z.boolean().nullish().describe("A run through the Agent API must end in success before traffic"),
    evals: z.array(GateCase).max(200).nullish().describe(
      "Eval cases (docs/evals.md) that must all pass against the new revision before traffic",
    ),
  }).nullish().describe("Checks before traffic (the revision's /ok is always checked)"),
  canary_percent: z.number().int().min(1).max(99).nullish().describe(
    "Send this share of new threads to the new revision (sticky per thread) until promote or abort",
  ),
});
export type ReleaseBody = z.infer<typeof ReleaseBody>;

export const RollbackBody = z.strictObject({
  revision_id: z.uuid().describe("The earlier revision to serve again (one that reached DEPLOYED)"),
});

export function releaseRoutes(s: PlatformServices, ctx: (tenantId: string) => DeploymentContext): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  const load = async (tenantId: string, id: string) => {
    const d = await getDeployment(s.sql, tenantId, id);
    if (!d) throw notFound("deployment", id);
    return d;
  };

  app.post("/:deployment_id/rollback", async (c) => {
    const body = await readBody(c, RollbackBody);
    const { deployment, revisionId } = await redeployRevision(
      ctx(c.var.caller.tenantId),
      c.req.param("deployment_id"),
      body.revision_id,
    );
    s.reconciler.notify(deployment.id);
    return c.json(revisionResource((await getRevision(s.sql, deployment.id, revisionId))!), 201);
  });

  for (const action of ["promote", "abort"] as const) {
    app.post(`/:deployment_id/canary/${action}`, async (c) => {
      const d = await load(c.var.caller.tenantId, c.req.param("deployment_id"));
      await s.reconciler.endCanary(d, action);
      return c.json(deploymentResource(await load(c.var.caller.tenantId, d.id)));
    });
  }
  return app;
}
