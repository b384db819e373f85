/**
 * The studio under `agentcli serve`: off unless `AGENTCLI_STUDIO=1`; when on, its page is
 * served but every API call it makes needs the deployment's credentials (the platform API key
 * here); a deployment whose auth lets anyone in (`anonymous`) refuses to start with it on.
 * Plus the `/studio` sub-app's files, fallback and path safety over `app.request`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Hono } from "hono";
import { buildBundle } from "../../core/bundle/bundle.ts";
import { loadProject } from "../../core/config/load.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type Serving, startServe } from "../_spawn-serving.ts";
import { studioEnabled, studioRoutes } from "../../core/server/routes/studio.ts";

const dir = mkdtempSync(join(tmpdir(), "agentcli-studio-serve-"));
const bundles: Record<string, string> = {};
after(() => rmSync(dir, { recursive: true, force: true }));
before(async () => {
  const driver = new PluginDriver([...builtinPlugins]);
  for (
    const [name, project] of Object.entries({
      keyed: new URL("../fixtures/projects/memory/", import.meta.url).pathname,
      open: new URL("../ui/fixtures/basic/", import.meta.url).pathname,
    })
  ) {
    const loaded = await loadProject(join(project, "agent.toml"), {
      driver,
      env: { OPENAI_API_KEY: "test-key" },
      requireEnv: false,
      cwd: project,
    });
    bundles[name] = join(dir, `${name}.tgz`);
    writeFileSync(bundles[name], (await buildBundle(loaded, { driver, version: "test" })).bytes);
  }
});

/** `agentcli serve <bundle>` with `env`, once it says it serves. */
function serve(bundle: string, env: Record<string, string>): Promise<Serving> {
  return startServe({ bundle, dataDir: mkdtempSync(join(dir, "data-")), env: { OPENAI_API_KEY: "test-key", ...env } });
}

test("serve: no studio unless AGENTCLI_STUDIO=1", { timeout: 120_000 }, async () => {
  const s = await serve(bundles.keyed!, { PLATFORM_API_KEY: "studio-key" });
  try {
    const res = await fetch(`${s.url}/studio`);
    assert.equal(res.status, 404, await res.text());
  } finally {
    await s.stop();
  }
});

test("serve with AGENTCLI_STUDIO=1: the page is served, its API calls need the platform API key", {
  timeout: 120_000,
}, async () => {
  const s = await serve(bundles.keyed!, { PLATFORM_API_KEY: "studio-key", AGENTCLI_STUDIO: "1" });
  try {
    const page = await fetch(`${s.url}/studio`);
    assert.equal(page.status, 200);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="\/studio\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.length >= 2, "index.html names its script and stylesheet");
    for (const a of assets) assert.equal((await fetch(`${s.url}/studio/${a}`)).status, 200, a);
    const search = (headers: Record<string, string>) =>
      fetch(`${s.url}/assistants/search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    const refused = await search({});
    assert.equal(refused.status, 401, await refused.text());
    assert.equal((await search({ "x-api-key": "wrong" })).status, 401);
    const ok = await search({ "x-api-key": "studio-key" });
    assert.equal(ok.status, 200, await ok.text());
  } finally {
    await s.stop();
  }
});

test("serve with AGENTCLI_STUDIO=1 and auth that lets anyone in: refuses to start", { timeout: 120_000 }, async () => {
  await assert.rejects(serve(bundles.open!, { AGENTCLI_STUDIO: "1" }), (err: Error) => {
    assert.match(err.message, /exited with 1 before serving/);
    assert.match(err.message, /Cannot serve the studio at \/studio: auth provider "anonymous" accepts requests/);
    assert.match(err.message, /Unset AGENTCLI_STUDIO/);
    return true;
  });
});

test("studioEnabled: on under dev unless 0, off under serve unless 1", () => {
  assert.equal(studioEnabled({}, "dev"), true);
  assert.equal(studioEnabled({ AGENTCLI_STUDIO: "0" }, "dev"), false);
  assert.equal(studioEnabled({}, "serve"), false);
  assert.equal(studioEnabled({ AGENTCLI_STUDIO: "1" }, "serve"), true);
  assert.equal(studioEnabled({ AGENTCLI_STUDIO: "yes please" }, "serve"), false);
});

test("the /studio sub-app: index for / and app paths, hashed assets cached, unsafe or missing files 404", async () => {
  const files: Record<string, string> = {
    "studio/index.html": "<!doctype html><title>studio</title>",
    "studio/assets/index-abc.js": "console.log(1)",
  };
  const app = new Hono();
  app.route(
    "/studio",
    studioRoutes({ assets: { get: async (p) => (p in files ? new TextEncoder().encode(files[p]) : null) } }),
  );
  for (const path of ["/studio", "/studio/", "/studio/threads/x"]) {
    const res = await app.request(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("cache-control"), "no-cache");
  }
  const js = await app.request("/studio/assets/index-abc.js");
  assert.equal(js.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.match(js.headers.get("cache-control") ?? "", /immutable/);
  assert.equal((await app.request("/studio/assets/gone.js")).status, 404);
  assert.equal((await app.request("/studio/..%2Fmanifest.json")).status, 404);
  const unbuilt = new Hono();
  unbuilt.route(
    "/studio",
    studioRoutes({ assets: { get: async () => null }, log: { info() {}, warn() {}, error() {} } }),
  );
  const res = await unbuilt.request("/studio");
  assert.equal(res.status, 503);
  assert.match(await res.text(), /npm run build:ui/);
});
