/**
 * Approval cards in real Chromium against `agentcli dev` on `fixtures/approvals`
 * (`approvals.toml`: `write_file` needs a person's approval): approve, edit the arguments,
 * and reject with a reason; each resumes the run with the human-in-the-loop decision.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { ModelServer } from "../fixtures/model-server/server.ts";
import type { RunningAgent } from "./_agent.ts";
import { startUiStack, type UiStack } from "./_stack.ts";
import { screenshot, type TestBrowser } from "./_browser.ts";

let model: ModelServer;
let agent: RunningAgent;
let browser: TestBrowser;

let stack: UiStack;
before(async () => {
  stack = await startUiStack("approvals");
  ({ model, agent, browser } = stack);
});

after(async () => {
  await stack?.close();
});

async function askToWrite(page: Page, prompt: string, content: string) {
  model.script({ when: prompt, toolCalls: [{ name: "write_file", args: { file_path: "/draft.md", content } }] });
  await page.goto(`${agent.url}/app`);
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill(prompt);
  await composer.press("Enter");
  const card = page.getByTestId("approval-card");
  await card.waitFor({ timeout: 60_000 });
  assert.match(await card.textContent() ?? "", /write_file/);
  assert.match(await card.textContent() ?? "", new RegExp(content));
  assert.ok(await composer.isDisabled(), "the composer waits for the decision");
  return card;
}

async function openFile(page: Page): Promise<string> {
  await page.getByTestId("tab-files").click();
  await page.getByTestId("files-panel").getByRole("button", { name: /\/draft\.md/ }).click();
  return await page.getByTestId("files-panel").textContent() ?? "";
}

test("approve: the action runs and the agent continues", async () => {
  const page = await (await browser.context()).newPage();
  const card = await askToWrite(page, "Write the first draft", "version one");
  await screenshot(page, "10-approval-card");
  model.script({ when: (r) => r.messages.at(-1)?.role === "tool", text: "Saved the draft after your approval." });
  await card.getByRole("button", { name: "Approve" }).click();
  await page.getByText("Saved the draft after your approval.").waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId("approval-card").count(), 0);
  assert.match(await openFile(page), /version one/);
});

test("edit: the edited arguments run instead", async () => {
  const page = await (await browser.context()).newPage();
  const card = await askToWrite(page, "Write the second draft", "version two");
  await card.getByRole("button", { name: "Edit" }).click();
  const editor = card.getByLabel("Arguments (JSON)");
  await editor.fill("{ not json");
  await card.getByRole("button", { name: "Save and approve" }).click();
  assert.match(await card.getByRole("alert").textContent() ?? "", /Invalid JSON/);
  await editor.fill(JSON.stringify({ file_path: "/draft.md", content: "edited by a person" }, null, 2));
  await screenshot(page, "11-approval-edit");
  model.script({ when: (r) => r.messages.at(-1)?.role === "tool", text: "Saved your edited draft." });
  await card.getByRole("button", { name: "Save and approve" }).click();
  await page.getByText("Saved your edited draft.").waitFor({ timeout: 60_000 });
  const file = await openFile(page);
  assert.match(file, /edited by a person/);
  assert.doesNotMatch(file, /version two/);
});

test("reject: the action does not run and the agent receives the reason", async () => {
  const page = await (await browser.context()).newPage();
  const card = await askToWrite(page, "Write the third draft", "version three");
  await card.getByRole("button", { name: "Reject" }).click();
  await card.getByLabel("Reason (sent to the agent)").fill("Not now, the outline is not approved yet");
  await screenshot(page, "12-approval-reject");
  model.script({ when: (r) => r.messages.at(-1)?.role === "tool", text: "Understood, I did not write the file." });
  await card.getByRole("button", { name: "Reject" }).click();
  await page.getByText("Understood, I did not write the file.").waitFor({ timeout: 60_000 });
  const toolResult = model.requests.at(-1)!.messages.at(-1)!;
  assert.equal(toolResult.role, "tool");
  assert.match(toolResult.content, /Not now, the outline is not approved yet/);
  // Nothing was written, so the activity panel did not open by itself.
  assert.equal(await page.getByTestId("panel-toggle").getAttribute("aria-pressed"), "false");
  await page.getByTestId("panel-toggle").click();
  await page.getByTestId("tab-files").click();
  const panel = page.getByRole("tabpanel");
  assert.match(await panel.textContent() ?? "", /Files the agent writes/, "no file was written");
});
