/**
 * The API reference at `/docs` in real Chromium: on an agent server with auth, the page loads
 * without credentials, a call made from it without credentials is refused (401), and after
 * "Authorize" with a bearer token the same call carries it and succeeds. The control plane's
 * reference shows its own document. Screenshots go to docs/ui/.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { userError } from "../../core/kernel/errors.ts";
import { listen, type Listening } from "../../core/server/host/node.ts";
import { startTestServer, type TestServer } from "../server/_harness.ts";
import { startTestPlatform, type TestPlatform } from "../platform/_harness.ts";
import { docScreenshot, launchBrowser, type TestBrowser } from "./_browser.ts";

let server: TestServer;
let platform: TestPlatform;
let platformHttp: Listening;
let browser: TestBrowser;
const seen: string[] = [];

before(async () => {
  server = await startTestServer({
    authenticate: async (req) => {
      const auth = req.headers.get("authorization");
      seen.push(auth ?? "(none)");
      if (auth !== "Bearer alice-token") {
        throw userError("UNAUTHORIZED", { message: "Cannot authenticate the request: no valid bearer token" });
      }
      return { identity: "alice", isAuthenticated: true };
    },
  });
  platform = await startTestPlatform();
  platformHttp = await listen({ fetch: (req) => platform.platform.app.fetch(req) }, { port: 0, host: "127.0.0.1" });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await platformHttp?.close();
  await platform?.close();
  await server?.close();
});

/** Opens an operation, presses "Try it out" then "Execute"; returns the status code shown. */
async function execute(page: Page, opId: string): Promise<string> {
  const op = page.locator(`#${opId}`);
  if (!(await op.locator(".btn.try-out__btn").isVisible())) await op.locator(".opblock-summary").click();
  const tryOut = op.getByRole("button", { name: "Try it out" });
  if (await tryOut.isVisible()) await tryOut.click();
  await op.locator(".execute").click();
  const status = op.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor({ timeout: 60_000 });
  const text = ((await status.textContent()) ?? "").trim();
  await op.locator(".btn-clear").click();
  return text;
}

test("agent server: /docs is public; its calls carry the credentials given to Authorize", async () => {
  const page = await (await browser.context({ width: 1280, height: 800 })).newPage();
  await page.goto(`${server.url}/docs`);
  await page.locator(".opblock").first().waitFor({ timeout: 60_000 });
  const opId = "operations-threads-post_threads_search";
  await page.locator(`#${opId}`).waitFor();

  seen.length = 0;
  assert.match(await execute(page, opId), /^401/, "without credentials the API refuses");
  assert.deepEqual(seen, ["(none)"]);

  await page.getByRole("button", { name: "Authorize" }).first().click();
  // The first scheme of the dialog is the bearer token (the document's `bearer`).
  const scheme = page.locator(".modal-ux .auth-container").first();
  assert.match(await scheme.textContent() ?? "", /bearer/);
  await scheme.locator("input").first().fill("alice-token");
  await scheme.locator("button.authorize").click();
  await page.locator(".modal-ux button.btn-done").first().click();

  seen.length = 0;
  assert.match(await execute(page, opId), /^200/, "with the token the call succeeds");
  assert.deepEqual(seen, ["Bearer alice-token"], "the call carried the token");
  await page.reload();
  await page.locator(`#${opId}`).waitFor({ timeout: 60_000 });
  seen.length = 0;
  assert.match(await execute(page, opId), /^200/, "the authorization is kept across a reload");
  assert.deepEqual(seen, ["Bearer alice-token"]);
});

test("control plane: /docs shows its own API, generated from its schemas", async () => {
  const page = await (await browser.context({ width: 1280, height: 800 })).newPage();
  await page.goto(`http://127.0.0.1:${platformHttp.port}/docs`);
  await page.locator(".opblock").first().waitFor({ timeout: 60_000 });
  const text = await page.locator("#swagger-ui").textContent() ?? "";
  assert.match(text, /agentcli control plane API/);
  assert.match(text, /\/v2\/deployments/);
  assert.match(text, /\/v2\/listeners\/\{listener_id\}/);
  await page.locator("#operations-deployments-post_v2_deployments .opblock-summary").click();
  await page.locator("#operations-deployments-post_v2_deployments").getByText("source_revision_config").first()
    .waitFor();
  await docScreenshot(page, "api-reference-control-plane");
});
