/**
 * Generative UI components of a LangGraph.js project (`ui` of langgraph.json), served as
 * LangGraph's JS server serves them to `LoadExternalComponent` of
 * `@langchain/langgraph-sdk/react-ui`: `POST /ui/{namespace}` with `{ name, shadowRootId }`
 * answers HTML (the stylesheets, then a script whose `onload` renders the component named
 * into the shadow root), and `GET /ui/{namespace}/{file}` the files. The page supplies React
 * and the SDK (`LGUI_REQUIRE`) and the component store (`LGUI_EXT_STORE`).
 *
 * Built at start without a native bundler (the single executable has none): each module the
 * components' file reaches by a relative import is transpiled with sucrase (TypeScript, JSX,
 * ES modules to CommonJS) into one script that links them; a package import is asked of the
 * page's `LGUI_REQUIRE` (react, react-dom, react/jsx-runtime, the SDK, what the page shares);
 * an imported `.css` file is served as a stylesheet.
 *
 * @example
 * const builds = buildGraphUis({ ui: { chat: "src/ui.tsx" }, dir: "/p" });
 * app.route("/ui", graphUiRoutes(() => builds));
 */
import { readFileSync } from "node:fs";
import { dirname, extname, join, relative } from "node:path";
import { Hono } from "hono";
import { transform } from "sucrase";
import { agentcliError, LangGraphUiInvalid } from "../../kernel/index.ts";

/** The files served for one namespace: `entrypoint.js` and its stylesheets. */
export type GraphUiFiles = Array<{ basename: string; contents: string; type: string }>;

const SOURCE = /\.(tsx|ts|jsx|mjs|js)$/;
const CANDIDATES = ["", ".tsx", ".ts", ".jsx", ".js", "/index.tsx", "/index.ts", "/index.js"];

/** A relative import's file under `from`'s folder, trying LangGraph's extensions (`./x.js` may name `./x.tsx`). */
function resolveRelative(from: string, specifier: string): string | null {
  const base = join(dirname(from), specifier);
  const bases = [base, base.replace(/\.(m?js|jsx)$/, "")];
  for (const b of bases) {
    for (const ext of CANDIDATES) {
      try {
        readFileSync(b + ext);
        return b + ext;
      } catch { /* the next candidate */ }
    }
  }
  return null;
}

/** The relative imports and requires of a module turned CommonJS by sucrase. */
function requiresOf(code: string): string[] {
  return [...code.matchAll(/\brequire\(\s*(["'])(\.{1,2}\/[^"']+)\1\s*\)/g)].map((m) => m[2]!);
}

/** Builds one namespace's components module into `entrypoint.js` (and its stylesheets). */
export function buildGraphUi(opts: { namespace: string; file: string; root: string; config: string }): GraphUiFiles {
  const modules: string[] = [];
  const styles: GraphUiFiles = [];
  const ids = new Map<string, number>();
  const fail = (reason: string) =>
    agentcliError(LangGraphUiInvalid, { config: opts.config, namespace: opts.namespace, path: opts.file, reason });
  const visit = (file: string): number => {
    const known = ids.get(file);
    if (known !== undefined) return known;
    const id = ids.size;
    ids.set(file, id);
    const shown = relative(opts.root, file);
    let source: string;
    try {
      source = readFileSync(file, "utf8");
    } catch {
      throw fail(`${shown} cannot be read`);
    }
    if (file.endsWith(".css")) {
      styles.push({ basename: `style-${id}.css`, contents: source, type: "text/css; charset=utf-8" });
      modules[id] = "function(){}";
      return id;
    }
    if (!SOURCE.test(file)) throw fail(`${shown} is not a module (.tsx, .ts, .jsx, .js or .css)`);
    let code: string;
    try {
      code = transform(source, {
        transforms: /\.tsx?$/.test(file) ? ["typescript", "jsx", "imports"] : ["jsx", "imports"],
        jsxRuntime: "automatic",
        production: true,
        filePath: file,
      }).code;
    } catch (err) {
      throw fail(`${shown}: ${String((err as Error).message).split("\n")[0]}`);
    }
    const links: Record<string, number> = {};
    modules[id] = ""; // reserved: its imports are numbered after it
    for (const specifier of requiresOf(code)) {
      const target = resolveRelative(file, specifier);
      if (!target) throw fail(`${shown} imports "${specifier}", which is not a file of the project`);
      links[specifier] = visit(target);
    }
    modules[id] = `[function(module, exports, require){${code}\n}, ${JSON.stringify(links)}]`;
    return id;
  };
  visit(opts.file);
  const name = JSON.stringify(`__LGUI_${opts.namespace}`);
  const entry = `(function(){
var defs = [${modules.map((m) => (m.startsWith("[") ? m : `[${m}, {}]`)).join(",\n")}];
var cache = {};
function load(id) {
  if (cache[id]) return cache[id].exports;
  var module = cache[id] = { exports: {} };
  defs[id][0](module, module.exports, function (specifier) {
    var linked = defs[id][1][specifier];
    if (linked !== undefined) return load(linked);
    var ext = globalThis[Symbol.for("LGUI_REQUIRE")];
    if (typeof ext !== "function") throw new Error("LGUI_REQUIRE is not set: load this UI with LoadExternalComponent");
    return ext(specifier);
  });
  return module.exports;
}
var ui = load(0);
var components = ui && ui.__esModule ? ui.default : ui;
globalThis[${name}] = {
  render: function (name, shadowRootId) {
    var host = document.getElementById(shadowRootId);
    var root = host.shadowRoot || host.attachShadow({ mode: "open" });
    var target = document.createElement("div");
    root.appendChild(target);
    var comp = components && components[name];
    if (!comp) throw new Error("No UI component " + JSON.stringify(name) + " in ${opts.namespace}");
    globalThis[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, comp, target);
  }
};
})();
`;
  return [...styles, { basename: "entrypoint.js", contents: entry, type: "text/javascript; charset=utf-8" }];
}

/** Builds every namespace of `ui` (paths relative to `dir`); a module that does not build stops the start (or a dev reload). */
export function buildGraphUis(opts: { ui: Record<string, string>; dir: string; config: string }) {
  return Object.fromEntries(
    Object.entries(opts.ui).map(([namespace, path]) => [
      namespace,
      buildGraphUi({ namespace, file: join(opts.dir, path), root: opts.dir, config: opts.config }),
    ]),
  );
}

/** `POST /{namespace}` (the HTML LoadExternalComponent inserts) and `GET /{namespace}/{file}`, mounted at `/ui`. */
export function graphUiRoutes(builds: () => Record<string, GraphUiFiles>): Hono {
  const app = new Hono();
  app.post("/:namespace", async (c) => {
    const namespace = c.req.param("namespace");
    const files = builds()[namespace];
    if (!files) return c.json({ detail: `No UI components for "${namespace}"` }, 404);
    const body = await c.req.json().catch(() => null) as { name?: unknown } | null;
    if (!body || typeof body.name !== "string" || !body.name) {
      return c.json({ detail: 'The body must be a JSON object with the component\'s "name"' }, 422);
    }
    const origin = new URL(c.req.url).origin;
    const base = `${origin}/ui/${encodeURIComponent(namespace)}`;
    const call = `globalThis[${JSON.stringify(`__LGUI_${namespace}`)}].render(${
      JSON.stringify(body.name)
    }, "{{shadowRootId}}")`;
    const html = [
      ...files.filter((f) => extname(f.basename) === ".css").map((f) =>
        `<link rel="stylesheet" href="${base}/${f.basename}" />`
      ),
      `<script src="${base}/entrypoint.js" onload='${call.replace(/&/g, "&amp;").replace(/'/g, "&#39;")}'></script>`,
    ];
    return c.text(html.join("\n"), 200, { "content-type": "text/html; charset=utf-8" });
  });
  app.get("/:namespace/:file", (c) => {
    const file = builds()[c.req.param("namespace")]?.find((f) => f.basename === c.req.param("file"));
    if (!file) return c.json({ detail: "Not found" }, 404);
    return c.body(file.contents, 200, { "content-type": file.type, "cache-control": "no-cache" });
  });
  return app;
}
