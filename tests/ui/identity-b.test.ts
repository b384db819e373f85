/**
 * `identity_b` in real Chromium against `agentcli dev` on `fixtures/identity-b` (development
 * bypass off) with a local stand-in for the provider (tests/fixtures/identity-servers/
 * widget-provider.ts): the widget script is loaded from the frontend API host inside
 * IDENTITY_B_PUBLISHABLE_KEY (no IDENTITY_B_JS_URL), its session tokens go to the API as
 * `Authorization: Bearer`, and the server accepts them through the real JWKS verification
 * (`IDENTITY_B_API_URL` + `IDENTITY_B_SECRET_KEY`, issuer and authorized party checked).
 * Sign-up, sign-in, a wrong password, the social login round trip, password reset by code,
 * sign-out, and a widget script that cannot load.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";
import type { Page } from "playwright-core";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { startWidgetProvider, type WidgetProvider } from "../fixtures/identity-servers/widget-provider.ts";
import { type RunningAgent, startAgent } from "./_agent.ts";
import { launchBrowser, screenshot, type TestBrowser } from "./_browser.ts";

let model: ModelServer;
let provider: WidgetProvider;
let agent: RunningAgent;
let browser: TestBrowser;

before(async () => {
  model = await startModelServer();
  provider = await startWidgetProvider();
  agent = await startAgent("identity-b", (url) => ({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.openaiBaseUrl,
    IDENTITY_B_SECRET_KEY: provider.secretKey,
    IDENTITY_B_PUBLISHABLE_KEY: provider.publishableKey,
    IDENTITY_B_API_URL: provider.backend.url,
    IDENTITY_B_ISSUER: provider.frontendApi,
    IDENTITY_B_AUTHORIZED_PARTIES: url,
    AGENTCLI_DEV_AUTH_BYPASS: "0",
  }));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await agent?.close();
  await provider?.close();
  await model?.close();
});

async function newPage(): Promise<Page> {
  return (await browser.context({ ignoreHTTPSErrors: true })).newPage();
}

function widget(page: Page) {
  return page.getByTestId("identity-b-widget");
}

async function signIn(page: Page, email: string, password: string) {
  await widget(page).getByLabel("Email address").fill(email);
  await widget(page).getByLabel("Password").fill(password);
  await widget(page).getByRole("button", { name: "Continue", exact: true }).click();
}

async function signOut(page: Page) {
  await page.getByTestId("sign-out").click();
  await widget(page).getByRole("heading", { name: "Sign in to Widgets Inc." }).waitFor();
}

/** What the API lists for a user, asked with a session token the provider would mint for them. */
async function threadTitlesOf(userId: string): Promise<string[]> {
  const token = await provider.backend.sign(userId, { iss: provider.frontendApi, azp: agent.url });
  const client = new Client({ apiUrl: agent.url, apiKey: null, defaultHeaders: { authorization: `Bearer ${token}` } });
  return (await client.threads.search({ limit: 50 })).map((t) => String(t.metadata?.title ?? ""));
}

test("the widget loads from the publishable key's host; sign up, chat with its session token, reload, sign out", async () => {
  const html = await (await fetch(`${agent.url}/app`)).text();
  assert.doesNotMatch(html, new RegExp(provider.secretKey), "the secret key never reaches the page");
  assert.ok(
    html.includes(JSON.stringify(provider.scriptUrl).slice(1, -1)),
    // Seen failing in some full runs only (never alone): say what was served, and by whom.
    `the script URL comes from the publishable key: expected ${provider.scriptUrl} from ${agent.url} (pid ${agent.pid}), ` +
      `the page has ${/"script_url":"[^"]*"/.exec(html)?.[0] ?? "no script_url"}; dev's output:\n${
        agent.output().slice(-2000)
      }`,
  );
  const anonymous = await fetch(`${agent.url}/threads/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(anonymous.status, 401, "the API refuses calls without a session token");

  const page = await newPage();
  const scripts: string[] = [];
  const apiAuth: Array<string | null> = [];
  page.on("request", (r) => {
    if (r.resourceType() === "script" && r.url().startsWith(provider.frontendApi)) scripts.push(r.url());
    if (r.url().startsWith(`${agent.url}/threads`) || r.url().startsWith(`${agent.url}/runs`)) {
      apiAuth.push(r.headers()["authorization"] ?? null);
    }
  });
  await page.goto(`${agent.url}/app`);
  await widget(page).getByRole("heading", { name: "Sign in to Widgets Inc." }).waitFor();
  assert.deepEqual(scripts, [provider.scriptUrl]);
  assert.equal(await page.getByRole("textbox", { name: "Message" }).count(), 0, "no chat before signing in");
  await screenshot(page, "19-identity-b-widget");

  await widget(page).getByRole("button", { name: "Sign up" }).click();
  await widget(page).getByLabel("Email address").fill("lin@example.com");
  await widget(page).getByLabel("Password").fill("short");
  await widget(page).getByRole("button", { name: "Continue", exact: true }).click();
  assert.equal(await widget(page).getByRole("alert").textContent(), "Passwords must be 8 characters or more.");
  await widget(page).getByLabel("Password").fill("a-long-password");
  await widget(page).getByRole("button", { name: "Continue", exact: true }).click();
  await page.getByTestId("signed-in-as").waitFor();
  assert.equal(await page.getByTestId("signed-in-as").textContent(), "lin@example.com");

  model.script({ text: "Hello, widget user." });
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill("Hi from Lin");
  await composer.press("Enter");
  await page.getByText("Hello, widget user.").waitFor({ timeout: 60_000 });
  await page.getByTestId("thread-list").getByRole("button", { name: "Hi from Lin" }).waitFor();
  assert.ok(apiAuth.length >= 2, `API calls were made (${apiAuth.length})`);
  assert.ok(apiAuth.every((h) => h?.startsWith("Bearer ey")), "every API call carries the widget's session token");
  assert.ok(
    provider.tokensIssued > 0 && provider.backend.jwksCalls > 0,
    "tokens came from the provider and were verified with its JWKS",
  );
  const lin = provider.userId("lin@example.com")!;
  assert.deepEqual(await threadTitlesOf(lin), ["Hi from Lin"], "the server filed the thread under the token's user");
  assert.deepEqual(
    await threadTitlesOf(provider.createUser("other@example.com", "another-password")),
    [],
    "another user does not see it",
  );
  await screenshot(page, "20-identity-b-signed-in");

  await page.reload();
  await page.getByTestId("signed-in-as").waitFor();
  await page.getByTestId("thread-list").getByRole("button", { name: "Hi from Lin" }).waitFor();

  await signOut(page);
  assert.equal(provider.endedSessions.length, 1, "sign-out ends the session at the provider");
  assert.equal(await page.getByRole("textbox", { name: "Message" }).count(), 0);
  await page.context().close();
});

test("sign in (a wrong password first), the social login round trip, and password reset by code", async () => {
  provider.createUser("grace@example.com", "correct-horse-1", "Grace Hopper");
  const page = await newPage();
  await page.goto(`${agent.url}/app`);
  await signIn(page, "grace@example.com", "wrong-password");
  assert.match(await widget(page).getByRole("alert").textContent() ?? "", /Password is incorrect/);
  await screenshot(page, "21-identity-b-wrong-password");
  await widget(page).getByLabel("Password").fill("correct-horse-1");
  await widget(page).getByRole("button", { name: "Continue", exact: true }).click();
  assert.equal(await page.getByTestId("signed-in-as").textContent(), "grace@example.com");
  await signOut(page);

  // Social login: away to the provider's consent and back to the app, signed in.
  const consent = page.waitForRequest((r) =>
    r.url().startsWith(`${provider.frontendApi}/oauth/google`) && r.isNavigationRequest()
  );
  await widget(page).getByRole("button", { name: "Continue with Google" }).click();
  await consent;
  await page.getByTestId("signed-in-as").waitFor();
  assert.equal(new URL(page.url()).pathname, "/app", "back on the app");
  assert.equal(await page.getByTestId("signed-in-as").textContent(), provider.socialEmail);
  await signOut(page);

  // Password reset: a code by email, then a new password, and the user is signed in.
  await widget(page).getByRole("button", { name: "Forgot password?" }).click();
  await widget(page).getByLabel("Email address").fill("grace@example.com");
  await widget(page).getByRole("button", { name: "Send reset code" }).click();
  await widget(page).getByText("We sent a code to grace@example.com.").waitFor();
  const code = provider.resetCodes.get("grace@example.com");
  assert.ok(code, "a reset code was emailed");
  await widget(page).getByLabel("Code").fill(code);
  await widget(page).getByLabel("New password").fill("new-battery-staple");
  await widget(page).getByRole("button", { name: "Reset password" }).click();
  await page.getByTestId("signed-in-as").waitFor();
  assert.equal(provider.passwordOf("grace@example.com"), "new-battery-staple");
  await page.context().close();
});

test("a widget script that cannot load shows a clear error, not the chat", async () => {
  const page = await newPage();
  await page.route(provider.scriptUrl, (route) => route.abort("blockedbyclient"));
  await page.goto(`${agent.url}/app`);
  const error = page.getByTestId("auth-load-error");
  await error.waitFor();
  assert.match(
    await error.textContent() ?? "",
    new RegExp(`Cannot load the sign-in widget from ${new URL(provider.frontendApi).host.replace(/\./g, "\\.")}`),
  );
  assert.equal(await page.getByRole("textbox", { name: "Message" }).count(), 0);
  await screenshot(page, "22-identity-b-unavailable");
  await page.context().close();
});
