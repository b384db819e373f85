/**
 * `identity_b` in real Chromium against `agentcli dev` on `fixtures/identity-b`: the provider's
 * widget script cannot be reached here, so the page must say so clearly (and never fall
 * through to an unauthenticated chat). The loader's address comes from `IDENTITY_B_JS_URL`.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { startAgent, type RunningAgent } from "./_agent.ts";
import { launchBrowser, screenshot, type TestBrowser } from "./_browser.ts";

let agent: RunningAgent;
let browser: TestBrowser;
let deadUrl: string;

before(async () => {
  // A port nothing listens on: the script load fails the way a blocked CDN does.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  deadUrl = `http://127.0.0.1:${port}/widget.js`;
  agent = await startAgent("identity-b", {
    OPENAI_API_KEY: "sk-test",
    IDENTITY_B_SECRET_KEY: "sk_test_secret",
    IDENTITY_B_PUBLISHABLE_KEY: `pk_test_${btoa("widget.identity-b.invalid$")}`,
    IDENTITY_B_JS_URL: deadUrl,
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await agent?.close();
});

test("a widget script that cannot load shows a clear error, not the chat", async () => {
  const page = await (await browser.context()).newPage();
  const html = await (await fetch(`${agent.url}/app`)).text();
  assert.doesNotMatch(html, /sk_test_secret/, "the secret key never reaches the page");
  await page.goto(`${agent.url}/app`);
  const error = page.getByTestId("auth-load-error");
  await error.waitFor();
  assert.match(await error.textContent() ?? "", /Cannot load the sign-in widget from 127\.0\.0\.1:\d+/);
  assert.equal(await page.getByRole("textbox", { name: "Message" }).count(), 0);
  await screenshot(page, "19-identity-b-unavailable");
});
