/**
 * `identity_a` sign-in in real Chromium against `agentcli dev` on `fixtures/identity-a`
 * (development bypass off, so every API call must carry the session token) and a local
 * GoTrue-style server: sign-up, chat as that user, sign-out, sign-in, a wrong password,
 * password reset (request and recovery link), and a rejected token sending the user back to
 * sign-in.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type RunningAgent, startAgent } from "./_agent.ts";
import { launchBrowser, screenshot, type TestBrowser } from "./_browser.ts";
import { type BrowserGoTrue, startBrowserGoTrue } from "../fixtures/identity-servers/gotrue-browser.ts";

let model: ModelServer;
let gotrue: BrowserGoTrue;
let agent: RunningAgent;
let browser: TestBrowser;
const EMAIL = "ada@example.com";

before(async () => {
  model = await startModelServer();
  gotrue = await startBrowserGoTrue();
  agent = await startAgent("identity-a", {
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.openaiBaseUrl,
    IDENTITY_A_URL: gotrue.url,
    IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: gotrue.publishableKey,
    AGENTCLI_DEV_AUTH_BYPASS: "0",
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await agent?.close();
  await gotrue?.close();
  await model?.close();
});

async function signIn(page: Page, email: string, password: string) {
  const form = page.getByTestId("sign-in-form");
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Password").fill(password);
  await form.getByRole("button", { name: "Sign in" }).click();
}

test("sign up, chat with a bearer token, sign out, sign in again", async () => {
  const context = await browser.context();
  const page = await context.newPage();
  const apiAuth: Array<string | null> = [];
  page.on("request", (r) => {
    if (r.url().startsWith(`${agent.url}/threads`)) apiAuth.push(r.headers()["authorization"] ?? null);
  });
  await page.goto(`${agent.url}/app`);
  const form = page.getByTestId("sign-in-form");
  await form.waitFor();
  await screenshot(page, "13-sign-in");

  await form.getByRole("button", { name: "Sign up" }).click();
  await form.getByLabel("Email").fill(EMAIL);
  await form.getByLabel("Password").fill("first-password");
  await form.getByRole("button", { name: "Sign up" }).click();
  await page.getByTestId("signed-in-as").waitFor();
  assert.equal(await page.getByTestId("signed-in-as").textContent(), EMAIL);

  model.script({ text: "Hello, member." });
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill("Hi from Ada");
  await composer.press("Enter");
  await page.getByText("Hello, member.").waitFor({ timeout: 60_000 });
  await page.getByTestId("thread-list").getByRole("button", { name: "Hi from Ada" }).waitFor();
  assert.ok(apiAuth.length > 0);
  assert.ok(apiAuth.every((h) => h?.startsWith("Bearer ey")), "every API call carries the session token");
  await screenshot(page, "14-signed-in");

  await page.getByTestId("sign-out").click();
  await form.waitFor();
  assert.equal(gotrue.logouts, 1, "sign-out ends the session at the provider");

  await signIn(page, EMAIL, "wrong-password");
  assert.match(await page.getByTestId("auth-error").textContent() ?? "", /Invalid login credentials/);
  await screenshot(page, "15-sign-in-error");
  await signIn(page, EMAIL, "first-password");
  await page.getByTestId("thread-list").getByRole("button", { name: "Hi from Ada" }).waitFor();
  await context.close();
});

test("password reset: request a link, then set a new password from it", async () => {
  const context = await browser.context();
  const page = await context.newPage();
  await page.goto(`${agent.url}/app`);
  const form = page.getByTestId("sign-in-form");
  await form.getByRole("button", { name: "Forgot password?" }).click();
  await form.getByLabel("Email").fill(EMAIL);
  await form.getByRole("button", { name: "Send reset link" }).click();
  await page.getByText(`If an account exists for ${EMAIL}, a password reset link is on its way.`).waitFor();
  assert.deepEqual(gotrue.recoveries, [EMAIL]);

  // The link in the email brings the user back with a recovery session in the fragment.
  const token = await gotrue.tokenFor(EMAIL);
  await page.goto(`${agent.url}/app/#access_token=${token}&expires_in=3600&token_type=bearer&type=recovery`);
  await page.getByLabel("New password").fill("second-password");
  await page.getByRole("button", { name: "Save password" }).click();
  await page.getByTestId("signed-in-as").waitFor();
  assert.equal(gotrue.passwordOf(EMAIL), "second-password");
  assert.doesNotMatch(page.url(), /access_token/, "the token does not stay in the address bar");
  await context.close();
});

test("a token the API rejects (401) sends the user back to sign-in", async () => {
  const context = await browser.context();
  const page = await context.newPage();
  await page.goto(`${agent.url}/app`);
  await signIn(page, EMAIL, "second-password");
  await page.getByTestId("signed-in-as").waitFor();
  await page.evaluate(() => {
    const key = "agentcli.identity_a.session";
    const s = JSON.parse(localStorage.getItem(key)!);
    s.access_token = "not-a-valid-token";
    localStorage.setItem(key, JSON.stringify(s));
  });
  await page.reload();
  await page.getByTestId("sign-in-form").waitFor();
  await page.getByText("Your session has expired. Sign in again to continue.").waitFor();
  await screenshot(page, "16-session-expired");
  await context.close();
});
