/**
 * The studio (issue 36), a Hono sub-app the agent server mounts at `/studio`: a developer's
 * view inside the agent (graph, threads and runs, checkpoints and time travel, run traces,
 * store and assistants). Static files only, built ahead of time into `dist/ui/studio/` (the
 * same build and manifest as the chat UI, `scripts/build-ui.ts`); the page talks to the Agent
 * API with the caller's own credentials, so the data stays behind the deployment's auth.
 * Mounted by `dev`, and by `serve` only with `AGENTCLI_STUDIO=1` ({@link studioEnabled}).
 *
 * @example
 * const studio = studioEnabled(env, "serve") ? studioRoutes({ log }) : undefined;
 * await createAgentServer({ graphs, studio });   // GET /studio -> the studio
 */
import { Hono } from "hono";
import {
  agentcliError,
  consoleLog,
  type Env,
  isCompiled,
  type ServerLog,
  StudioNeedsAuth,
} from "../../kernel/index.ts";
import {
  assetResponse,
  AUTH_DRIVER_PATH,
  authDriverModule,
  contentType,
  embeddedAssets,
  scriptSafeJson,
  sourceAssets,
  type UiAssets,
  type UiAuthSettings,
  type UiIdentity,
} from "./ui.ts";

/** The variable that turns the studio on under `serve`. */
export const STUDIO_ENV = "AGENTCLI_STUDIO";

/** True when the server mounts the studio: always under `dev`, under `serve` only with `AGENTCLI_STUDIO=1`. */
export function studioEnabled(env: Env, mode: "dev" | "serve"): boolean {
  if (mode === "dev") return !["0", "false", "no", "off"].includes(env[STUDIO_ENV]?.trim().toLowerCase() ?? "");
  return ["1", "true", "yes", "on"].includes(env[STUDIO_ENV]?.trim().toLowerCase() ?? "");
}

/**
 * Refuses a studio under `serve` whose identity provider lets anyone in (a public provider such
 * as `anonymous`): the studio reads and changes every thread, so it is never open.
 */
export function assertStudioProtected(
  opts: { mode: "dev" | "serve"; provider: string | null; public?: boolean },
): void {
  if (opts.mode === "serve" && opts.public) {
    throw agentcliError(StudioNeedsAuth, { provider: opts.provider ?? "none" });
  }
}

const NOT_BUILT = "Cannot serve the studio: it is not built. Run `npm run build:ui` (npm ci does it).";

/** What the studio's page is told (public: publishable values only), injected into its index.html. */
export interface StudioSettings {
  /** The deployment's identity provider and its sign-in module (`/studio/auth-driver.js`), as the chat UI's. */
  auth: UiAuthSettings;
}

/** The studio's settings from the chat UI's auth settings: the sign-in module is served under `/studio` too. */
export function studioSettings(auth: UiAuthSettings): StudioSettings {
  return { auth: { ...auth, module: auth.module ? `/studio/${AUTH_DRIVER_PATH}` : null } };
}

/** index.html with the settings in place (before the first script, so the page can read them). */
function renderStudioIndex(html: string, settings: StudioSettings | undefined): string {
  if (!settings) return html;
  const tag = `<script type="application/json" id="agentcli-studio-settings">${scriptSafeJson(settings)}</script>`;
  return html.replace("</head>", () => `${tag}\n</head>`);
}

/**
 * The `/studio` sub-app: index.html (with {@link StudioSettings}) for `/` and any path that is
 * not a file; hashed assets cached for a year; `auth-driver.js`, the identity plugin's browser
 * module, so the studio signs the developer in as the chat UI does.
 */
export function studioRoutes(
  opts: { assets?: UiAssets; log?: ServerLog; settings?: StudioSettings; identity?: UiIdentity | null } = {},
): Hono {
  const assets = opts.assets ?? (isCompiled() ? embeddedAssets : sourceAssets());
  const app = new Hono();
  const notFound = (path: string) => Response.json({ detail: `Not found: GET /studio/${path}` }, { status: 404 });

  const serveIndex = async () => {
    const bytes = await assets.get("studio/index.html");
    if (!bytes) {
      (opts.log ?? consoleLog()).error(NOT_BUILT);
      return Response.json({ detail: NOT_BUILT }, { status: 503 });
    }
    return new Response(renderStudioIndex(new TextDecoder().decode(bytes), opts.settings), {
      headers: {
        "content-type": contentType("index.html"),
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      },
    });
  };

  const serveDriver = authDriverModule(opts.identity, opts.log);
  app.get("/", serveIndex);
  app.get(`/${AUTH_DRIVER_PATH}`, async () => (await serveDriver()) ?? notFound(AUTH_DRIVER_PATH));
  app.get("/:path{.*}", async (c) => {
    const path = c.req.param("path") ?? "";
    if (path === "" || path === "index.html") return serveIndex();
    if (!/^[A-Za-z0-9._/-]+$/.test(path) || path.split("/").some((s) => s === "." || s === "..")) {
      return notFound(path);
    }
    const bytes = await assets.get(`studio/${path}`);
    if (!bytes) return path.startsWith("assets/") || /\.[a-z0-9]+$/i.test(path) ? notFound(path) : serveIndex();
    return assetResponse(path, bytes);
  });
  return app;
}
