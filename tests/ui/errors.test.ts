/**
 * Error states in real Chromium against `agentcli dev` on `fixtures/basic` started without
 * model credentials (what a new user sees before filling in `.env`), the local model server
 * reachable at OPENAI_BASE_URL: the page still loads, and a run fails with a message that
 * names the variable to set, without calling the model.
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
  stack = await startUiStack("basic", { env: { OPENAI_API_KEY: "" } });
  ({ model, agent, browser } = stack);
});

after(async () => {
  await stack?.close();
});

test("missing model credentials: the run error names the variable to set", async () => {
  // dev answers /ok before it has loaded the project (it listens first), so the warning may
  // follow the first answer: wait for it (bounded), then check it.
  for (let i = 0; i < 600 && !/OPENAI_API_KEY/.test(agent.output()); i++) await new Promise((r) => setTimeout(r, 100));
  assert.match(agent.output(), /OPENAI_API_KEY/, "dev warns at start");
  const page = await (await browser.context()).newPage();
  await page.goto(`${agent.url}/app`);
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill("Are you there?");
  await composer.press("Enter");
  const error = page.getByTestId("run-error");
  await error.waitFor({ timeout: 60_000 });
  const text = await error.textContent() ?? "";
  assert.match(text, /OPENAI_API_KEY/, text);
  assert.match(text, /\.env/, "it says where to put it");
  assert.doesNotMatch(text, /at \S+\.ts:\d+|Traceback|Error: /, "no stack trace");
  await screenshot(page, "23-missing-credentials");
  assert.equal(
    await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
    "Message",
    "the user can try again at once",
  );
  assert.equal(model.requests.length, 0, "the model server (reachable) was never called without a key");
});
