/**
 * The API reference at `/docs` (Swagger UI, bundled: no CDN) on the server's `/openapi.json`,
 * and `/favicon.ico`. Both are static files built ahead of time with the chat UI
 * (`dist/ui/docs/`, `dist/ui/favicon.svg`; `npm run build:ui`) and embedded in the single
 * executable the same way. They are public; the calls the reference makes carry whatever
 * credentials the user gives its "Authorize" dialog, checked as usual.
 * The agent server and the control plane (`agentcli platform serve`) both mount it.
 *
 * @example
 * app.route("/", apiDocsRoutes());   // GET /docs -> the reference, GET /favicon.ico -> the icon
 */
import { Hono } from "hono";
import { consoleLog, isCompiled, type ServerLog } from "../../kernel/index.ts";
import { contentType, embeddedAssets, sourceAssets, type UiAssets } from "./ui.ts";

/** The reference's files under `docs/` in the built UI: one flat folder. */
const DOCS_FILE = /^[a-z0-9][a-z0-9._-]*$/i;

/** The paths this sub-app answers, for the public-path list and the OpenAPI document. */
export const API_DOCS_PATHS = ["/docs", "/favicon.ico"] as const;

/** `/docs`, `/docs/<file>` and `/favicon.ico`, from `assets` (default: embedded or `dist/ui/`). */
export function apiDocsRoutes(opts: { assets?: UiAssets; log?: ServerLog } = {}): Hono {
  const assets = opts.assets ?? (isCompiled() ? embeddedAssets : sourceAssets());
  const app = new Hono();
  const notBuilt = (what: string) =>
    new Response(
      JSON.stringify({ detail: `Cannot serve ${what}: it is not built. Run \`npm run build:ui\` (npm ci does it).` }),
      {
        status: 503,
        headers: { "content-type": "application/json; charset=utf-8" },
      },
    );
  const file = async (path: string, cache: string) => {
    const bytes = await assets.get(path);
    if (!bytes) return null;
    return new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": contentType(path), "cache-control": cache, "x-content-type-options": "nosniff" },
    });
  };

  app.get("/docs", async () => {
    const res = await file("docs/index.html", "no-cache");
    if (res) return res;
    (opts.log ?? consoleLog()).error(
      "Cannot serve the API reference",
      new Error("docs/index.html is missing from the built UI"),
    );
    return notBuilt("the API reference");
  });
  app.get("/docs/:file", async (c) => {
    const name = c.req.param("file");
    const res = DOCS_FILE.test(name) ? await file(`docs/${name}`, "public, max-age=300") : null;
    return res ?? c.json({ detail: `Not found: ${c.req.method} ${new URL(c.req.url).pathname}` }, 404);
  });
  // An SVG under the name browsers ask for: every current browser reads it by its content type.
  app.get("/favicon.ico", async () => (await file("favicon.svg", "public, max-age=86400")) ?? notBuilt("the favicon"));
  return app;
}
