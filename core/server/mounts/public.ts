/** The public routes: probes, `/info`, the OpenAPI document, the chat UI, the studio and the API docs (before auth). */
import type { Hono } from "hono";
import { type ServerLog, VERSION } from "../../kernel/index.ts";
import type { AppEnv } from "../http/auth-middleware.ts";
import { openApiDocument } from "../http/openapi.ts";
import { mcpMessageSchema } from "../protocols/openapi-operations.ts";
import { apiDocsRoutes } from "../routes/api-docs.ts";
import type { AgentServerOptions } from "../app.ts";
import { type InfoFields, mountInfoRoute } from "./info.ts";

export type { InfoFields } from "./info.ts";

export function mountPublic(
  app: Hono<AppEnv>,
  o: { opts: AgentServerOptions; info: InfoFields; log: ServerLog },
): void {
  const { opts, info } = o;
  app.get("/ok", (c) => c.json({ ok: true }));
  if (!opts.disable?.meta) mountInfoRoute(app, opts, info);
  // A queue worker replica answers probes and /info only; the API is served by api replicas.
  if (info.role === "worker") {
    app.use(async (c) =>
      c.json({
        detail: `This replica only runs the queue (role "worker"): send ${c.req.method} ${
          new URL(c.req.url).pathname
        } to an API replica`,
      }, 404)
    );
  }
  const extraPaths = [
    ...(opts.ui ? ["/app"] : []),
    ...(opts.studio ? ["/studio"] : []),
    ...(opts.extraRoutes ?? []).map((r) => r.path),
  ];
  app.get("/openapi.json", async (c) => {
    const schemas = extraPaths.includes("/mcp") ? { McpMessage: await mcpMessageSchema() } : undefined;
    return c.json(openApiDocument({ title: "agentcli Agent API", version: VERSION, extraPaths, schemas }));
  });
  if (opts.ui) app.route("/app", opts.ui);
  if (opts.studio) app.route("/studio", opts.studio);
  if (opts.graphUi) app.route("/ui", opts.graphUi);
  app.route("/", apiDocsRoutes({ log: o.log }));
}
