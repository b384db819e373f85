/**
 * The studio's sign-in under `agentcli serve` with `AGENTCLI_STUDIO=1` and an `[auth]` identity
 * provider (`fixtures/identity-a`, its browser-facing GoTrue server local), in real Chromium:
 * the studio draws the identity plugin's own sign-in screen (its module served at
 * `/studio/auth-driver.js`), every API call then carries the session's bearer token, a session
 * made at `/app` carries over, a token the API rejects sends the developer back to sign-in, and
 * the connection form still takes a key or token for other servers.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { buildBundle } from "../../core/bundle/bundle.ts";
import { loadProject } from "../../core/config/load.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type BrowserGoTrue, startBrowserGoTrue } from "../fixtures/identity-servers/gotrue-browser.ts";
import { type Serving, startServe } from "../_spawn-serving.ts";
import { docScreenshot, launchBrowser, type TestBrowser } from "./_browser.ts";

const PROJECT = new URL("./fixtures/identity-a/", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "agentcli-studio-sign-in-"));
const EMAIL = "grace@example.com";
const PASSWORD = "studio-password";

let model: ModelServer;
let gotrue: BrowserGoTrue;
let browser: TestBrowser;
let server: Serving;
let url: string;

before(async () => {
  model = await startModelServer();
  gotrue = await startBrowserGoTrue();
  const driver = new PluginDriver([...builtinPlugins]);
  const loaded = await loadProject(join(PROJECT, "agent.toml"), {
    driver,
    env: { OPENAI_API_KEY: "sk-test" },
    requireEnv: false,
    cwd: PROJECT,
  });
  const bundle = join(dir, "identity-a.tgz");
  writeFileSync(bundle, (await buildBundle(loaded, { driver, version: "test" })).bytes);
  server = await startServe({
    bundle,
    dataDir: mkdtempSync(join(dir, "data-")),
    env: {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: model.openaiBaseUrl,
      IDENTITY_A_URL: gotrue.url,
      IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: gotrue.publishableKey,
      AGENTCLI_STUDIO: "1",
    },
  });
  url = server.url;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await gotrue?.close();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fill(page: Page, button: "Sign in" | "Sign up") {
  const form = page.getByTestId("sign-in-form");
  await form.getByLabel("Email").fill(EMAIL);
  await form.getByLabel("Password").fill(PASSWORD);
  await form.getByRole("button", { name: button }).click();
}

/** The `authorization` header of every Agent API call the page makes. */
function recordAuth(page: Page): Array<string | null> {
  const seen: Array<string | null> = [];
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (r.url().startsWith(url) && /^\/(assistants|threads|store)\b/.test(path)) {
      seen.push(r.headers()["authorization"] ?? null);
    }
  });
  return seen;
}

test("the studio signs the developer in with the identity provider; its API calls carry the session token", async () => {
  const driver = await fetch(`${url}/studio/auth-driver.js`);
  assert.equal(driver.status, 200, "the sign-in module is served under /studio");
  assert.match(driver.headers.get("content-type") ?? "", /javascript/);
  const html = await (await fetch(`${url}/studio`)).text();
  assert.match(
    html,
    /id="agentcli-studio-settings">\{"auth":\{"provider":"identity_a","module":"\/studio\/auth-driver\.js"/,
  );
  assert.doesNotMatch(html, /sk-test/, "no secret in the page");

  const context = await browser.context({ width: 1440, height: 900 });
  const page = await context.newPage();
  const auth = recordAuth(page);
  await page.goto(`${url}/studio`);
  await page.getByTestId("studio-sign-in").getByTestId("sign-in-form").waitFor();
  assert.equal(await page.getByTestId("area-graph").count(), 0, "nothing of the studio before sign-in");
  await docScreenshot(page, "studio-sign-in-light");
  await page.getByTestId("sign-in-form").getByRole("button", { name: "Sign up" }).click();
  await fill(page, "Sign up");
  await page.getByTestId("signed-in-as").waitFor();
  assert.equal(await page.getByTestId("signed-in-as").textContent(), EMAIL);
  await page.getByTestId("graph-view").waitFor();
  await page.getByTestId("area-threads").click();
  await page.getByTestId("thread-list").waitFor();
  assert.ok(auth.length >= 2, `the studio called the API (${auth.length} calls)`);
  assert.ok(auth.every((h) => h?.startsWith("Bearer ey")), `every API call carries the session token: ${auth}`);
  const refused = await fetch(`${url}/assistants/search`, { method: "POST", body: "{}" });
  assert.equal(refused.status, 401, "the API itself still needs the token");

  // The paste field stays, for other servers.
  await page.getByTestId("connection-toggle").click();
  const form = page.getByTestId("connection-form");
  await form.getByLabel("API key (x-api-key)").waitFor();
  await form.getByLabel("Bearer token").waitFor();
  assert.match(await form.textContent() ?? "", /with your sign-in/);
  await page.getByTestId("connection-toggle").click();

  await page.getByTestId("sign-out").click();
  await page.getByTestId("sign-in-form").waitFor();
  assert.equal(gotrue.logouts, 1, "sign-out ends the session at the provider");
  await fill(page, "Sign in");
  await page.getByTestId("signed-in-as").waitFor();
  await context.close();
});

test("a session made at /app carries over to the studio; a rejected token sends back to sign-in", async () => {
  const context = await browser.context();
  const page = await context.newPage();
  await page.goto(`${url}/app`);
  await fill(page, "Sign in");
  await page.getByTestId("signed-in-as").waitFor();
  await page.goto(`${url}/studio?area=threads`);
  await page.getByTestId("thread-list").waitFor();
  assert.equal(await page.getByTestId("signed-in-as").textContent(), EMAIL);
  assert.equal(await page.getByTestId("studio-sign-in").count(), 0);

  await page.evaluate(() => {
    const key = "agentcli.identity_a.session";
    const s = JSON.parse(localStorage.getItem(key)!);
    s.access_token = "not-a-valid-token";
    localStorage.setItem(key, JSON.stringify(s));
  });
  await page.reload();
  await page.getByTestId("studio-sign-in").getByTestId("sign-in-form").waitFor();
  await page.getByText("Your session has expired. Sign in again to continue.").waitFor();
  await context.close();
});
