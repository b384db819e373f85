/**
 * The execute card in real Chromium against `agentcli dev --sandbox local` on
 * `fixtures/sandbox` (`approvals.toml` gates `execute`): the approval card shows the command;
 * once approved, the card shows the command, the exit code and the output, collapsed when long.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { startUiStack, type UiStack } from "./_stack.ts";
import { screenshot } from "./_browser.ts";

let stack: UiStack;
// A dev server running as root runs local sandboxes as "nobody", who must be able to enter this.
const sandboxDir = mkdtempSync(join(tmpdir(), "agentcli-ui-sandboxes-"));
chmodSync(sandboxDir, 0o711);

before(async () => {
  stack = await startUiStack("sandbox", { args: ["--sandbox", "local"], env: { AGENTCLI_SANDBOX_DIR: sandboxDir } });
});
after(async () => {
  await stack?.close();
  rmSync(sandboxDir, { recursive: true, force: true });
});

async function runApproved(page: Page, prompt: string, command: string, answer: string) {
  stack.model.script({ when: prompt, toolCalls: [{ name: "execute", args: { command } }] });
  await page.goto(`${stack.agent.url}/app`);
  const composer = page.getByRole("textbox", { name: "Message" });
  await composer.fill(prompt);
  await composer.press("Enter");
  const approval = page.getByTestId("approval-card");
  await approval.waitFor({ timeout: 60_000 });
  assert.equal(await approval.getByTestId("approval-command").textContent(), `$ ${command}`);
  await screenshot(page, "40-execute-approval");
  stack.model.script({ when: (r) => r.messages.at(-1)?.role === "tool", text: answer });
  await approval.getByRole("button", { name: "Approve" }).click();
  await page.getByText(answer).waitFor({ timeout: 60_000 });
  const card = page.locator('[data-tool="execute"]').last();
  await card.getByTestId("exec-exit").waitFor();
  return card;
}

test("execute: approval shows the command; the card shows command, exit code and output", async () => {
  const page = await (await stack.browser.context()).newPage();
  const card = await runApproved(
    page,
    "Count the files",
    "echo hello from the sandbox; exit 3",
    "The command failed with exit code 3.",
  );
  assert.equal(await card.getByTestId("exec-exit").textContent(), "exit 3");
  await card.getByRole("button", { name: /execute/ }).click();
  assert.equal(await card.getByTestId("exec-command").textContent(), "echo hello from the sandbox; exit 3");
  assert.equal(await card.getByTestId("exec-output").textContent(), "hello from the sandbox");
  await screenshot(page, "41-execute-card");
});

test("execute: long output is collapsed until asked", async () => {
  const page = await (await stack.browser.context()).newPage();
  const card = await runApproved(page, "Print many lines", "seq 1 60", "Printed sixty lines.");
  assert.equal(await card.getByTestId("exec-exit").textContent(), "exit 0");
  await card.getByRole("button", { name: /execute/ }).click();
  const output = card.getByTestId("exec-output");
  assert.equal((await output.textContent())!.split("\n").length, 20);
  await card.getByRole("button", { name: "Show all 60 lines" }).click();
  assert.equal((await output.textContent())!.split("\n").at(-1), "60");
});
