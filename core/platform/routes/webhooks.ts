/**
 * Push webhooks (extension) for `build_on_push`: `POST /v1/integrations/{integration_id}/webhook`
 * signed with the integration's webhook secret (`X-Hub-Signature-256: sha256=<hex>` as
 * GitHub sends it, or `X-Gitea-Signature: <hex>` as Gitea/Forgejo do). A push to the branch
 * a deployment follows (`repo_ref`) makes a new revision of it.
 */
import { Buffer } from "node:buffer";
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { agentcliError, PlatformWebhookSignatureInvalid } from "../../kernel/index.ts";
import { invalidField, notFound } from "../api/api-error.ts";
import type { PlatformServices } from "../api/context.ts";
import { deploymentsOfIntegration } from "../store/deployments.ts";
import { insertLatestRevision } from "../store/revisions.ts";
import { getIntegrationById } from "../store/tenancy.ts";
import { readBodyText } from "../api/request.ts";

function signatureMatches(body: string, secret: string, header: string | undefined): boolean {
  if (!header) return false;
  const given = header.replace(/^sha256=/, "");
  const expected = createHmac("sha256", secret).update(body).digest("hex");
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

const normalizeUrl = (u: string) => u.replace(/\.git$/, "").replace(/\/+$/, "").toLowerCase();

export function webhookRoutes(s: PlatformServices): Hono {
  const app = new Hono();
  app.post("/:integration_id/webhook", async (c) => {
    const integration = await getIntegrationById(s.sql, c.req.param("integration_id"));
    if (!integration) throw notFound("integration", c.req.param("integration_id"));
    const body = await readBodyText(c, s.limits.maxBodyBytes);
    const header = c.req.header("x-hub-signature-256") ?? c.req.header("x-gitea-signature") ??
      c.req.header("x-forgejo-signature");
    if (!signatureMatches(body, integration.webhook_secret, header)) {
      throw agentcliError(PlatformWebhookSignatureInvalid);
    }
    let push: { ref?: string; repository?: { clone_url?: string; html_url?: string } };
    try {
      push = JSON.parse(body);
    } catch {
      throw invalidField(["body"], "is not valid JSON", "json_invalid");
    }
    const branch = push.ref?.startsWith("refs/heads/") ? push.ref.slice("refs/heads/".length) : null;
    const urls = [push.repository?.clone_url, push.repository?.html_url].filter((u): u is string => Boolean(u)).map(
      normalizeUrl,
    );
    if (!branch || !urls.length) return c.json({ revisions: [] }, 202);
    const made: string[] = [];
    for (const d of await deploymentsOfIntegration(s.sql, integration.tenant_id, integration.id)) {
      if (
        !d.source_config.build_on_push || !d.source_config.repo_url ||
        !urls.includes(normalizeUrl(d.source_config.repo_url))
      ) continue;
      if (d.source_revision_config.repo_ref !== branch) continue;
      const id = randomUUID();
      const { repo_commit_sha: _sha, ...config } = d.source_revision_config;
      await s.sql.transaction((tx) =>
        insertLatestRevision(tx, {
          id,
          deploymentId: d.id,
          tenantId: d.tenant_id,
          source: "repohost",
          sourceRevisionConfig: config,
          secrets: d.secrets,
          remoteReconciled: d.remote_reconciled,
        })
      );
      s.reconciler.notify(d.id);
      made.push(id);
    }
    return c.json({ revisions: made }, 202);
  });
  return app;
}
