/**
 * The bundled chat UI (spec 2.5), a Hono sub-app the agent server mounts at `/app`.
 * Files come from the single executable's embedded assets (`ui/<path>`) or, from sources,
 * `dist/ui/` (built ahead of time by `npm run build:ui`, which `npm ci` runs). index.html gets the per-deployment
 * settings injected at serve time as `<script type="application/json" id="agentcli-settings">`.
 *
 * @example
 * const identity = { name: plugin.name, ...plugin.identity };     // the [auth] provider's plugin
 * const ui = uiRoutes({ settings: uiSettings(config, env, { identity }), identity });
 * const server = await createAgentServer({ graphs, ui });   // GET /app -> the chat
 */
import { Hono } from "hono";
import { type AgentConfig, DEFAULT_FRONTEND_PROMPTS, DEFAULT_FRONTEND_SUBTITLE } from "../../config/index.ts";
import {
  consoleLog,
  embeddedAsset,
  type Env,
  type IdentityUiSpec,
  isCompiled,
  type ServerLog,
} from "../../kernel/index.ts";
import type { AuthSettings, UiSettings } from "../../../ui/src/settings.ts";

/** Browser-facing auth settings: publishable values only, never secret keys. */
export type UiAuthSettings = AuthSettings;
/** What index.html receives (and nothing more: it is public). One definition, shared with the UI. */
export type { UiSettings };

/** Where the UI's files come from: a relative path (`index.html`, `assets/x.js`) -> bytes or null. */
export interface UiAssets {
  get(path: string): Promise<Uint8Array | null>;
}

/** What the UI needs of the configured identity plugin: its provider name and browser half. */
export interface UiIdentity {
  provider: string;
  /** The plugin's name, for logs. */
  name: string;
  ui?: IdentityUiSpec;
}

/** Where the UI loads the identity plugin's browser module from (under `/app`, public). */
export const AUTH_DRIVER_PATH = "auth-driver.js";

/**
 * The UI settings of a project: `[frontend]` with the spec's defaults, and the browser
 * settings of `identity`, the `[auth].provider`'s plugin (publishable values only:
 * `identity.ui.settings(env)`).
 */
export function uiSettings(
  config: AgentConfig,
  env: Env,
  opts: { assistantId?: string; identity?: UiIdentity | null } = {},
): UiSettings {
  const provider = config.auth?.provider ?? "none";
  const ui = opts.identity?.provider === provider ? opts.identity.ui : undefined;
  const auth: UiAuthSettings = {
    provider,
    module: ui ? `/app/${AUTH_DRIVER_PATH}` : null,
    settings: ui?.settings?.(env) ?? {},
  };
  return {
    app_name: config.frontend.app_name || config.agent.name,
    subtitle: config.frontend.subtitle ?? DEFAULT_FRONTEND_SUBTITLE,
    prompts: config.frontend.prompts?.length ? config.frontend.prompts : DEFAULT_FRONTEND_PROMPTS,
    assistant_id: opts.assistantId ?? config.agent.name,
    auth,
  };
}

/** JSON that is safe inside a `<script>` element: no `<`, `>`, `&` or line separators unescaped. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** index.html with the settings and the app name in place. */
export function renderIndex(html: string, settings: UiSettings): string {
  const tag = `<script type="application/json" id="agentcli-settings">${scriptSafeJson(settings)}</script>`;
  return html
    .replace("<!--agentcli:settings-->", () => tag)
    .replace(/<title>[^<]*<\/title>/, () => `<title>${escapeHtml(settings.app_name)}</title>`);
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json; charset=utf-8",
  map: "application/json; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  ico: "image/x-icon",
  woff: "font/woff",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8",
  webmanifest: "application/manifest+json",
  wasm: "application/wasm",
};

/** The content type of a file name. */
export function contentType(path: string): string {
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  return TYPES[ext] ?? "application/octet-stream";
}

/** The built UI's file names, relative to `dist/ui/` (from its manifest), for embedding as `ui/<path>`. */
export async function uiAssetFiles(): Promise<string[]> {
  const { readFile } = await import("node:fs/promises");
  const manifest = JSON.parse(await readFile(new URL("manifest.json", distDir()), "utf8")) as { files: string[] };
  return ["manifest.json", ...manifest.files];
}

function distDir(): URL {
  return new URL("../../../dist/ui/", import.meta.url);
}

/**
 * From sources: `dist/ui/`, built ahead of time (`npm ci` runs `npm run build:ui` as its
 * `prepare` step). Never built here: Vite in the server process costs seconds and ~400 MB.
 */
export function sourceAssets(): UiAssets {
  return {
    async get(path) {
      const { readFile } = await import("node:fs/promises");
      const file = new URL(path, distDir());
      if (!isSafePath(path) || !file.href.startsWith(distDir().href)) return null;
      try {
        return new Uint8Array(await readFile(file));
      } catch {
        return null;
      }
    },
  };
}

/** A relative path inside the UI: no scheme, no absolute path, no `.`/`..` segments, no backslashes. */
function isSafePath(path: string): boolean {
  return !path.startsWith("/") && !path.includes("\\") && !path.includes(":") &&
    !path.split("/").some((seg) => seg === "." || seg === "..");
}

/** Inside the single executable: the embedded assets `ui/<path>`. */
export const embeddedAssets: UiAssets = {
  get: async (path) => embeddedAsset(`ui/${path}`),
};

/**
 * Serves the identity plugin's browser module (`identity.ui.module`) as JavaScript, loaded once
 * and kept; null when the plugin has none. Shared by `/app/auth-driver.js` and the studio's
 * `/studio/auth-driver.js`.
 */
export function authDriverModule(
  identity: UiIdentity | null | undefined,
  log?: ServerLog,
): () => Promise<Response | null> {
  let driverModule: Promise<string> | null = null;
  return async () => {
    if (!identity?.ui) return null;
    const spec = identity.ui;
    driverModule ??= Promise.resolve().then(() => (typeof spec.module === "function" ? spec.module() : spec.module))
      .then((source) => {
        if (typeof source !== "string" || !source.trim()) {
          throw new Error("identity.ui.module gave no JavaScript source");
        }
        return source;
      });
    try {
      return new Response(await driverModule, {
        headers: { "content-type": TYPES.js!, "cache-control": "no-cache", "x-content-type-options": "nosniff" },
      });
    } catch (err) {
      driverModule = null;
      (log ?? consoleLog()).error(`Cannot serve the sign-in module of identity plugin "${identity.name}"`, err);
      return new Response(JSON.stringify({ detail: "Cannot serve the sign-in module: see the server log." }), {
        status: 503,
        headers: { "content-type": "application/json; charset=utf-8" },
      });
    }
  };
}

/**
 * The `/app` sub-app: index.html (settings injected, never cached) for `/` and any path that
 * is not a file (SPA fallback); files under `assets/` are content-hashed and cached for a year;
 * `auth-driver.js` is the identity plugin's browser module (`identity.ui.module`), when it has one.
 */
export function uiRoutes(
  opts: { settings: UiSettings; assets?: UiAssets; log?: ServerLog; identity?: UiIdentity | null },
): Hono {
  const assets = opts.assets ?? (isCompiled() ? embeddedAssets : sourceAssets());
  const app = new Hono();
  let index: Promise<string> | null = null;

  const serveIndex = async () => {
    index ??= assets.get("index.html").then((bytes) => {
      if (!bytes) throw new Error("the chat UI's index.html is missing from the build");
      return renderIndex(new TextDecoder().decode(bytes), opts.settings);
    });
    let html: string;
    try {
      html = await index;
    } catch (err) {
      index = null;
      (opts.log ?? consoleLog()).error("Cannot serve the chat UI", err);
      return new Response(
        JSON.stringify({
          detail: "Cannot serve the chat UI: it is not built. Run `npm run build:ui` (npm ci does it).",
        }),
        {
          status: 503,
          headers: { "content-type": "application/json; charset=utf-8" },
        },
      );
    }
    return new Response(html, {
      headers: {
        "content-type": TYPES.html!,
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        "referrer-policy": "strict-origin-when-cross-origin",
      },
    });
  };

  const serveDriver = authDriverModule(opts.identity, opts.log);

  app.get("/", serveIndex);
  app.get(
    `/${AUTH_DRIVER_PATH}`,
    async (c) =>
      (await serveDriver()) ?? c.json({ detail: `Not found: ${c.req.method} ${new URL(c.req.url).pathname}` }, 404),
  );
  app.get("/:path{.*}", async (c) => {
    const path = c.req.param("path") ?? "";
    if (path === "" || path === "index.html") return serveIndex();
    if (!isSafePath(path)) return c.json({ detail: `Not found: ${c.req.method} ${new URL(c.req.url).pathname}` }, 404);
    const bytes = path === "manifest.json" ? null : await assets.get(path);
    if (!bytes) {
      // Missing files with an extension (a stale hashed asset) are 404s, not the page.
      if (path.startsWith("assets/") || /\.[a-z0-9]+$/i.test(path)) {
        return c.json({ detail: `Not found: ${c.req.method} ${new URL(c.req.url).pathname}` }, 404);
      }
      return serveIndex();
    }
    return assetResponse(path, bytes);
  });
  return app;
}

/** A built file of a UI: hashed `assets/` kept a year (their names change with them), other files 5 minutes. */
export function assetResponse(path: string, bytes: Uint8Array): Response {
  return new Response(bytes as Uint8Array<ArrayBuffer>, {
    headers: {
      "content-type": contentType(path),
      "cache-control": path.startsWith("assets/") ? "public, max-age=31536000, immutable" : "public, max-age=300",
      "x-content-type-options": "nosniff",
    },
  });
}
