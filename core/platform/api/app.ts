/**
 * The control plane's HTTP app (spec 4.3 plus the extensions in `docs/control-plane.md`): a Hono app on
 * Web-standard Request/Response, testable with `app.request()`. Every route but `/ok`,
 * `/openapi.json` with its API reference at `/docs` (./openapi.ts), `/favicon.ico`,
 * signed uploads, signed webhooks and bundle downloads (which also take a bundle token) needs
 * `X-Api-Key`; URLs and bodies are bounded and checked first (`request.ts`, `limits.ts`);
 * errors are `{"detail": ...}`; an
 * unexpected failure is a logged, generic 500 with no stack.
 *
 * @example
 * const app = createPlatformApp(services);
 * const res = await app.request("/v2/deployments", { headers: { "x-api-key": key } });
 */
import { Hono } from "hono";
import { apiDocsRoutes } from "../../server/index.ts";
import { agentcliError, PlatformApiKeyHeaderMissing, PlatformApiKeyInvalid, VERSION } from "../../kernel/index.ts";
import { errorBody } from "./api-error.ts";
import { bundleDownload } from "../routes/bundles.ts";
import type { PlatformEnv, PlatformServices } from "./context.ts";
import { platformOpenApiDocument } from "./openapi.ts";
import { deploymentRoutes } from "../routes/deployments.ts";
import { requestGuards } from "./request.ts";
import { sandboxRoutes } from "../routes/sandboxes.ts";
import { listenerRoutes, repoListingRoutes, templateRoutes, tokenRoutes } from "../routes/resources.ts";
import { authenticateKey } from "../store/tenancy.ts";
import { uploadRoutes } from "../routes/uploads.ts";
import { webhookRoutes } from "../routes/webhooks.ts";

export function createPlatformApp(
  s: PlatformServices,
  opts: { onError?: (err: unknown) => void } = {},
): Hono<PlatformEnv> {
  const app = new Hono<PlatformEnv>();
  app.onError((err, c) => {
    const known = errorBody(err);
    if (known) return c.json(known.body, known.status as 400);
    (opts.onError ?? ((e) => console.error("platform: unexpected error", e)))(err);
    return c.json({ detail: "Internal error; the control plane logged it" }, 500);
  });
  app.notFound((c) => c.json({ detail: `No route ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));

  app.use(requestGuards(s.limits.maxBodyBytes));
  app.use(async (c, next) => {
    c.set("maxBodyBytes", s.limits.maxBodyBytes);
    await next();
  });
  app.get("/ok", (c) => c.json({ ok: true, mode: s.mode }));
  app.get("/openapi.json", (c) => c.json(platformOpenApiDocument(VERSION)));
  app.route("/", apiDocsRoutes() as unknown as Hono<PlatformEnv>);
  app.route("/v2/uploads", uploadRoutes(s) as unknown as Hono<PlatformEnv>);
  app.route("/v1/integrations", webhookRoutes(s) as unknown as Hono<PlatformEnv>);

  app.get("/v2/deployments/:deployment_id/revisions/:revision_id/bundle", bundleDownload(s));

  app.use("/v1/*", auth(s));
  app.use("/v2/*", auth(s));
  app.route("/v2/deployments", deploymentRoutes(s));
  app.route("/v2/listeners", listenerRoutes(s));
  app.route("/v2/auth/tokens", tokenRoutes(s));
  app.route("/v2/templates", templateRoutes(s));
  app.route("/v2/sandboxes", sandboxRoutes(s));
  app.route("/v1/integrations", repoListingRoutes(s));
  return app;
}

function auth(s: PlatformServices) {
  return async (c: import("hono").Context<PlatformEnv>, next: () => Promise<void>) => {
    const key = c.req.header("x-api-key");
    if (!key) throw agentcliError(PlatformApiKeyHeaderMissing);
    const caller = await authenticateKey(s.sql, key);
    if (!caller) throw agentcliError(PlatformApiKeyInvalid);
    c.set("caller", caller);
    await next();
  };
}
