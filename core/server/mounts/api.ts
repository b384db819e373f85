/** The routes behind auth: the extra components (MCP, A2A) and the Agent API's route groups. */
import { Hono, type MiddlewareHandler } from "hono";
import type { CronScheduler } from "../../engine/index.ts";
import type { DisabledRoutes } from "../default-assistants.ts";
import type { ServerDeps } from "../deps.ts";
import { type AppEnv, authMiddleware } from "../http/auth-middleware.ts";
import { assistantRoutes } from "../routes/assistants.ts";
import { cronRoutes } from "../routes/crons.ts";
import { runRoutes } from "../routes/runs.ts";
import { storeRoutes } from "../routes/store.ts";
import { threadRoutes } from "../routes/threads.ts";
import { usageRoutes } from "../routes/usage.ts";
import type { AgentServerOptions } from "../app.ts";

export function mountApi(
  app: Hono<AppEnv>,
  o: {
    authenticate: AgentServerOptions["authenticate"];
    authorize?: MiddlewareHandler<AppEnv>;
    extraRoutes: NonNullable<AgentServerOptions["extraRoutes"]>;
    deps: ServerDeps;
    crons: CronScheduler;
    disable?: DisabledRoutes;
  },
): void {
  const { deps, crons } = o;
  // Auth guards everything after this point, extra components (MCP, A2A) included; the
  // authenticator itself lets public paths through.
  // `/usage` authenticates itself: the owner's `x-api-key` (PLATFORM_API_KEY) also under an identity provider.
  app.route("/", usageRoutes(deps, o.authenticate));
  app.use(authMiddleware(o.authenticate));
  if (o.authorize) app.use(o.authorize);
  for (const r of o.extraRoutes) app.route(r.path, typeof r.app === "function" ? r.app(deps) : r.app);

  const off = o.disable ?? {};
  const api = new Hono<AppEnv>();
  if (!off.assistants) api.route("/assistants", assistantRoutes(deps));
  if (!off.threads) api.route("/threads", threadRoutes(deps));
  if (!off.store) api.route("/store", storeRoutes(deps));
  if (!off.runs) api.route("/", cronRoutes(deps, crons));
  if (!off.runs) api.route("/", runRoutes(deps));
  app.route("/", api);
}
