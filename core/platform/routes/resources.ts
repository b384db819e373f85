/**
 * `/v2/listeners` (list, create and read are extensions; patch is the spec's), `/v2/templates`
 * (extension),
 * `/v2/auth/tokens` (list is an extension; metadata patch is the spec's, owner only), and the
 * `/v1/integrations/.../repos` repository listings.
 */
import { type Context, Hono } from "hono";
import { agentcliError, ListenerComputeTypeUnknown, PlatformTokenNotOwner } from "../../kernel/index.ts";
import { invalid, invalidField, notFound } from "../api/api-error.ts";
import type { PlatformEnv, PlatformServices } from "../api/context.ts";
import { listRepositories } from "../repo-listings.ts";
import { pageParams, readBody } from "../api/request.ts";
import { listenerResource, tokenResource } from "../api/resources.ts";
import {
  issuesToDetail,
  K8sComputeConfig,
  ListenerCreateBody,
  ListenerPatchBody,
  TokenMetadataBody,
} from "../api/schema.ts";
import { templateResource } from "../reconciler/templates.ts";
import {
  createListener,
  getIntegration,
  getListener,
  getToken,
  listListeners,
  listTokens,
  patchListener,
  patchTokenMetadata,
} from "../store/tenancy.ts";

/** A listener's `compute_type` must be one a compute plugin declares (`services.computeTypes`). */
function computeType(s: PlatformServices, type: string): string {
  if (s.computeTypes.includes(type)) return type;
  const known = s.computeTypes.map((t) => `"${t}"`).join(", ") || "none";
  const err = agentcliError(ListenerComputeTypeUnknown, { type, known });
  throw invalidField(["body", "compute_type"], err.message, "invalid_value");
}

/** Validates `compute_config` by `compute_type`. */
function computeConfig(type: string, raw: Record<string, unknown> | null | undefined): Record<string, unknown> {
  if (raw === null || raw === undefined) return {};
  if (type === "k8s") {
    const parsed = K8sComputeConfig.safeParse(raw);
    if (!parsed.success) {
      throw invalid(
        issuesToDetail(parsed.error.issues, "body").map((d) => ({
          ...d,
          loc: ["body", "compute_config", ...d.loc.slice(1)],
        })),
      );
    }
    return parsed.data;
  }
  if (Object.keys(raw).length) {
    throw invalidField(["body", "compute_config"], `compute_type "${type}" takes no compute_config`, "extra_forbidden");
  }
  return {};
}

export function listenerRoutes(s: PlatformServices): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  app.get("/", async (c) => {
    const p = pageParams(c);
    const rows = await listListeners(s.sql, c.var.caller.tenantId, { limit: p.limit, offset: p.offset });
    return c.json({ resources: rows.map(listenerResource), offset: p.offset + rows.length });
  });
  app.post("/", async (c) => {
    const body = await readBody(c, ListenerCreateBody);
    const row = await createListener(s.sql, {
      tenantId: c.var.caller.tenantId,
      computeType: computeType(s, body.compute_type),
      computeId: body.compute_id,
      computeConfig: computeConfig(body.compute_type, body.compute_config),
      version: body.version ?? null,
    });
    return c.json(listenerResource(row), 201);
  });
  app.get("/:listener_id", async (c) => {
    const row = await getListener(s.sql, c.var.caller.tenantId, c.req.param("listener_id"));
    if (!row) throw notFound("listener", c.req.param("listener_id"));
    return c.json(listenerResource(row));
  });
  app.patch("/:listener_id", async (c) => {
    const row = await getListener(s.sql, c.var.caller.tenantId, c.req.param("listener_id"));
    if (!row) throw notFound("listener", c.req.param("listener_id"));
    const body = await readBody(c, ListenerPatchBody, ["compute_type", "compute_id", "id"]);
    const cfg = body.compute_config === undefined || body.compute_config === null
      ? null
      : computeConfig(row.compute_type, body.compute_config);
    return c.json(listenerResource(await patchListener(s.sql, row.id, { version: body.version, computeConfig: cfg })));
  });
  return app;
}

/** `GET /v2/templates` (extension): the templates `internal_template` deployments can name, paged like every list. */
export function templateRoutes(s: PlatformServices): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  app.get("/", (c) => {
    const p = pageParams(c);
    const page = s.templates.slice(p.offset, p.offset + p.limit);
    return c.json({ resources: page.map(templateResource), offset: p.offset + page.length });
  });
  app.get("/:name", (c) => {
    const t = s.templates.find((x) => x.name === c.req.param("name"));
    if (!t) throw notFound("template", c.req.param("name"));
    return c.json(templateResource(t));
  });
  return app;
}

export function tokenRoutes(s: PlatformServices): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  app.get(
    "/",
    async (c) => c.json((await listTokens(s.sql, c.var.caller.tenantId, c.var.caller.userId)).map(tokenResource)),
  );
  app.patch("/:token_id/metadata", async (c) => {
    const token = await getToken(s.sql, c.var.caller.tenantId, c.req.param("token_id"));
    if (!token) throw notFound("token", c.req.param("token_id"));
    if (token.owner_user_id !== c.var.caller.userId) {
      throw agentcliError(PlatformTokenNotOwner, { token: token.id });
    }
    const body = await readBody(c, TokenMetadataBody);
    return c.json(tokenResource(await patchTokenMetadata(s.sql, token, body)));
  });
  return app;
}

export function repoListingRoutes(s: PlatformServices): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  const list = (kind: "repohost" | "forge") => async (c: Context<PlatformEnv>) => {
    const id = c.req.param("integration_id") ?? "";
    const integration = await getIntegration(s.sql, c.var.caller.tenantId, id);
    if (!integration || integration.kind !== kind) {
      throw notFound(kind === "forge" ? "forge integration" : "integration", id);
    }
    return c.json(await listRepositories(integration));
  };
  app.get("/repohost/:integration_id/repos", list("repohost"));
  app.get("/forge/repohost/:integration_id/repos", list("forge"));
  return app;
}
