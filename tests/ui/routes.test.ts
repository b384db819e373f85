/**
 * The `/app` sub-app over HTTP (`app.request`): index.html with settings injected and
 * escaped, SPA fallback, content types, cache headers, path safety, and the settings a
 * project produces (spec 2.5 defaults; publishable values only, never secret keys).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { contentType, renderIndex, scriptSafeJson, uiRoutes, uiSettings } from "../../core/server/routes/ui.ts";
import type { UiAssets, UiIdentity, UiSettings } from "../../core/server/routes/ui.ts";
import { browserModule } from "../../core/auth/browser.ts";
import type { ServerLog } from "../../core/kernel/log.ts";
import identityA from "../../plugins/identity/identity_a.ts";
import identityB, { identityBScriptUrl } from "../../plugins/identity/identity_b.ts";
import { DEFAULT_FRONTEND_PROMPTS, DEFAULT_FRONTEND_SUBTITLE } from "../../core/config/schema.ts";
import type { AgentConfig } from "../../core/config/schema.ts";

const INDEX =
  `<!doctype html><html><head><title>Agent</title><!--agentcli:settings--></head><body><div id="root"></div></body></html>`;

function memoryAssets(files: Record<string, string>): UiAssets {
  return { get: async (p) => (p in files ? new TextEncoder().encode(files[p]) : null) };
}

const settings: UiSettings = {
  app_name: `Docs </script><script>alert(1)</script> & "Co"`,
  subtitle: "Ask\u2028anything",
  prompts: ["</script>", "b"],
  assistant_id: "docs",
  auth: { provider: "anonymous", module: null, settings: {} },
};

function mounted(
  files = {
    "index.html": INDEX,
    "assets/app-abc123.js": "console.log(1)",
    "assets/app-abc123.css": "body{}",
    "favicon.svg": "<svg/>",
  },
) {
  const app = new Hono();
  app.route("/app", uiRoutes({ settings, assets: memoryAssets(files) }));
  return app;
}

function settingsFrom(html: string): unknown {
  const m = /<script type="application\/json" id="agentcli-settings">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(m, "settings script present");
  return JSON.parse(m[1]!);
}

test("index.html carries the settings as JSON that cannot break out of its script element", async () => {
  const app = mounted();
  for (const path of ["/app", "/app/", "/app/index.html"]) {
    const res = await app.request(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    const html = await res.text();
    assert.equal((html.match(/<\/script>/g) ?? []).length, 1, "only the settings element closes a script");
    assert.deepEqual(settingsFrom(html), settings);
    assert.match(
      html,
      /<title>Docs &lt;\/script&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;Co&quot;<\/title>/,
    );
  }
  assert.doesNotMatch(scriptSafeJson({ a: "<&>\u2028" }), /[<>&\u2028]/);
});

test("SPA fallback serves the page for routes, 404 for missing files", async () => {
  const app = mounted();
  const route = await app.request("/app/threads/123");
  assert.equal(route.status, 200);
  assert.match(await route.text(), /agentcli-settings/);
  assert.equal((await app.request("/app/assets/gone-000.js")).status, 404);
  assert.equal((await app.request("/app/missing.png")).status, 404);
});

test("assets get their content type; hashed assets are cached for a year", async () => {
  const app = mounted();
  const js = await app.request("/app/assets/app-abc123.js");
  assert.equal(js.status, 200);
  assert.equal(js.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(js.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(await js.text(), "console.log(1)");
  const css = await app.request("/app/assets/app-abc123.css");
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  const svg = await app.request("/app/favicon.svg");
  assert.equal(svg.headers.get("content-type"), "image/svg+xml");
  assert.notEqual(svg.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(contentType("x.woff2"), "font/woff2");
  assert.equal(contentType("x.unknown"), "application/octet-stream");
});

test("paths that try to leave the UI are refused", async () => {
  const seen: string[] = [];
  const app = new Hono();
  app.route(
    "/app",
    uiRoutes({
      settings,
      assets: {
        get: async (p) => {
          seen.push(p);
          return p === "index.html" ? new TextEncoder().encode(INDEX) : null;
        },
      },
    }),
  );
  for (
    const path of [
      "/app/..%2Fpackage.json",
      "/app/assets/..%2F..%2Fetc%2Fpasswd",
      "/app/file:%2F%2F%2Fetc%2Fpasswd",
      "/app/%2Fetc%2Fpasswd",
    ]
  ) {
    const res = await app.request(path);
    assert.equal(res.status, 404, path);
  }
  assert.deepEqual(seen.filter((p) => p !== "index.html"), []);
});

test("a missing build answers 503 with a message, not a stack trace", async () => {
  const app = new Hono();
  app.route("/app", uiRoutes({ settings, assets: memoryAssets({}), log: { info() {}, warn() {}, error() {} } }));
  const res = await app.request("/app/");
  assert.equal(res.status, 503);
  const body = await res.json() as { detail: string };
  assert.match(body.detail, /^Cannot serve the chat UI/);
});

function config(auth: string | null, frontend: Partial<AgentConfig["frontend"]> = {}): AgentConfig {
  return {
    agent: { name: "research-bot", description: "", model: null },
    sandbox: { provider: "none", template: "t", image: "python:3", scope: "thread" },
    auth: auth ? { provider: auth } : null,
    frontend: {
      enabled: true,
      app_name: "",
      subtitle: undefined as unknown as string,
      prompts: undefined as unknown as string[],
      ...frontend,
    },
    skills: [],
    user: { enabled: false },
    mcp: {},
    approvals: [],
    subagents: [],
  };
}

test("settings: spec defaults when [frontend] leaves them unset", () => {
  const s = uiSettings(config("anonymous"), {});
  assert.equal(s.app_name, "research-bot");
  assert.equal(s.subtitle, DEFAULT_FRONTEND_SUBTITLE);
  assert.deepEqual(s.prompts, DEFAULT_FRONTEND_PROMPTS);
  assert.equal(s.assistant_id, "research-bot");
  assert.deepEqual(s.auth, { provider: "anonymous", module: null, settings: {} });
  const custom = uiSettings(config("anonymous", { app_name: "Scout", subtitle: "Find things", prompts: ["One"] }), {});
  assert.equal(custom.app_name, "Scout");
  assert.equal(custom.subtitle, "Find things");
  assert.deepEqual(custom.prompts, ["One"]);
});

test("settings: identity providers expose publishable values only", () => {
  const env = {
    IDENTITY_A_URL: "https://abc.identity-a.example",
    IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: "sb_publishable_x",
    IDENTITY_A_SECRET_KEY: "secret-a",
    IDENTITY_B_PUBLISHABLE_KEY: `pk_test_${btoa("clerk.example.com$")}`,
    IDENTITY_B_SECRET_KEY: "sk_test_secret",
  };
  const a = uiSettings(config("identity_a"), env, {
    identity: { name: identityA.name, ...identityA.identity } as UiIdentity,
  });
  assert.deepEqual(a.auth, {
    provider: "identity_a",
    module: "/app/auth-driver.js",
    settings: { url: env.IDENTITY_A_URL, publishable_key: "sb_publishable_x" },
  });
  const b = uiSettings(config("identity_b"), env, {
    identity: { name: identityB.name, ...identityB.identity } as UiIdentity,
  });
  assert.equal(b.auth.provider, "identity_b");
  assert.equal(b.auth.settings.script_url, "https://clerk.example.com/npm/@clerk/clerk-js@5/dist/clerk.browser.js");
  for (const s of [a, b]) assert.doesNotMatch(renderIndex(INDEX, s), /secret/);
  assert.equal(
    identityBScriptUrl("pk_test_x", { IDENTITY_B_JS_URL: "http://127.0.0.1:9/w.js" }),
    "http://127.0.0.1:9/w.js",
  );
  assert.equal(identityBScriptUrl("not-a-key", {}), null);
  // Another provider's plugin contributes nothing.
  assert.deepEqual(
    uiSettings(config("identity_b"), env, { identity: { name: identityA.name, ...identityA.identity } as UiIdentity })
      .auth,
    { provider: "identity_b", module: null, settings: {} },
  );
  assert.deepEqual(uiSettings(config(null), {}).auth, { provider: "none", module: null, settings: {} });
});

function silentLog(): ServerLog & { errors: string[] } {
  const errors: string[] = [];
  const log = {
    info() {},
    warn() {},
    error(msg: string, err?: unknown) {
      errors.push(`${msg}: ${err instanceof Error ? err.message : String(err)}`);
    },
  };
  return Object.assign(log as unknown as ServerLog, { errors });
}

test("the identity plugin's browser module is served at /app/auth-driver.js; none without one", async () => {
  for (const [plugin, factoryName] of [[identityA, "identityABrowser"], [identityB, "identityBBrowser"]] as const) {
    const identity = { name: plugin.name, ...plugin.identity } as UiIdentity;
    const app = new Hono();
    app.route("/app", uiRoutes({ settings, assets: memoryAssets({ "index.html": INDEX }), identity }));
    const res = await app.request("/app/auth-driver.js");
    assert.equal(res.status, 200, factoryName);
    assert.equal(res.headers.get("content-type"), "text/javascript; charset=utf-8");
    const source = await res.text();
    assert.match(source, /^export default /);
    assert.doesNotMatch(source, /\bimport\b/, "self-contained: no imports");
    // It is a module a JavaScript engine accepts, whose default export is the factory.
    const mod = await import(`data:text/javascript,${encodeURIComponent(source)}`) as { default: unknown };
    assert.equal(typeof mod.default, "function");
  }
  const app = mounted();
  assert.equal((await app.request("/app/auth-driver.js")).status, 404);
});

test("a browser module that cannot be produced is a 503 naming nothing; the log names the plugin", async () => {
  const log = silentLog();
  const identity: UiIdentity = {
    name: "idp-broken",
    provider: "broken",
    ui: {
      module: () => {
        throw new Error("bundle missing");
      },
    },
  };
  const app = new Hono();
  app.route("/app", uiRoutes({ settings, assets: memoryAssets({ "index.html": INDEX }), identity, log }));
  const res = await app.request("/app/auth-driver.js");
  assert.equal(res.status, 503);
  assert.doesNotMatch(await res.text(), /bundle missing|idp-broken/);
  assert.match(log.errors.join("\n"), /identity plugin "idp-broken".*bundle missing/);
});

test("browserModule: arrow functions, function expressions and method shorthands become a default export", async () => {
  const methods = {
    make(settings: Record<string, unknown>) {
      return { settings } as never;
    },
  };
  const factories = [(s: Record<string, unknown>) => ({ s }) as never, function named(s: Record<string, unknown>) {
    return { s } as never;
  }, methods.make];
  for (const f of factories) {
    const mod = await import(`data:text/javascript,${encodeURIComponent(browserModule(f))}`) as {
      default: (s: unknown, c: unknown) => unknown;
    };
    assert.equal(typeof mod.default, "function", browserModule(f));
    assert.ok(mod.default({ k: 1 }, {}), "callable");
  }
});
