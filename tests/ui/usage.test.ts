/**
 * A usage budget in real Chromium against `agentcli dev` on `fixtures/basic` (anonymous auth)
 * with one run a minute per user: the first message is answered; the second is refused with
 * 429, and the page shows the server's message naming the limit and its variable, not the
 * SDK's raw `HTTP 429: {...}`.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { ModelServer } from "../fixtures/model-server/server.ts";
import type { RunningAgent } from "./_agent.ts";
import { startUiStack, type UiStack } from "./_stack.ts";
import { screenshot, type TestBrowser } from "./_browser.ts";

let model: ModelServer;
let agent: RunningAgent;
let browser: TestBrowser;
let stack: UiStack;

before(async () => {
  stack = await startUiStack("basic", { env: { AGENTCLI_USER_RUNS_PER_MINUTE: "1" } });
  ({ model, agent, browser } = stack);
});
after(async () => {
  await stack?.close();
});

test("over the runs per minute, the chat shows the limit's message", async () => {
  while (new Date().getUTCSeconds() > 40) await new Promise((r) => setTimeout(r, 250));
  model.script({ text: "FIRST-ANSWER" });
  const page = await (await browser.context()).newPage();
  await page.goto(`${agent.url}/app`);
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill("first");
  await composer.press("Enter");
  await page.getByText("FIRST-ANSWER").waitFor();
  await composer.fill("second");
  await composer.press("Enter");
  const error = page.getByTestId("run-error");
  await error.waitFor();
  const text = await error.textContent() ?? "";
  assert.match(text, /Cannot create the run: the runs per minute of one user is used up/, text);
  assert.match(text, /AGENTCLI_USER_RUNS_PER_MINUTE/, text);
  assert.doesNotMatch(text, /HTTP 429|\{"detail"/, "the message, not the raw response");
  await screenshot(page, "40-usage-limit");
});
