/**
 * The studio's state in the address bar, in real Chromium against `agentcli dev` on
 * `fixtures/basic`: deep links to an area, a thread, a run (its trace) and a checkpoint (one
 * older than the newest, and one beyond the first page of history), restored on reload and
 * walked with back and forward.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { startUiStack, type UiStack } from "./_stack.ts";
import { sdk } from "./_studio.ts";

let stack: UiStack;
let page: Page;
let threadId: string;
let runId: string;
let checkpoints: string[];

before(async () => {
  stack = await startUiStack("basic");
  page = await (await stack.browser.context({ width: 1440, height: 900 })).newPage();
  stack.model.script({ text: "First answer." }, { text: "Second answer." });
  const client = sdk(stack.agent.url);
  threadId = (await client.threads.create()).thread_id;
  for (const content of ["Deep link one", "Deep link two"]) {
    const run = await client.runs.create(threadId, "agent", { input: { messages: [{ role: "user", content }] } });
    await client.runs.join(threadId, run.run_id);
    runId = run.run_id;
  }
  // More checkpoints, so the first page of history (50) does not hold the oldest ones.
  for (let i = 0; i < 45; i++) await client.threads.updateState(threadId, { values: { todos: [] } });
  const history = await client.threads.getHistory(threadId, { limit: 200 });
  checkpoints = history.map((s) => s.checkpoint.checkpoint_id!);
});
after(async () => {
  await stack?.close();
});

const query = () => new URL(page.url()).searchParams;
const shownCheckpoint = () => page.getByTestId("checkpoint-id").textContent();

test("a deep link to a run opens its trace; reload keeps it", async () => {
  await page.goto(`${stack.agent.url}/studio?area=trace&thread=${threadId}&run=${runId}`);
  await page.getByTestId("trace-tree").getByTestId("span-run").first().waitFor();
  assert.equal(await page.getByTestId("area-trace").getAttribute("aria-selected"), "true");
  assert.equal(await page.getByTestId("trace-run").inputValue(), runId);
  await page.reload();
  await page.getByTestId("trace-tree").getByTestId("span-run").first().waitFor();
  assert.equal(await page.getByTestId("trace-run").inputValue(), runId);
});

test("a deep link to a checkpoint shows it, also one beyond the first page of history", async () => {
  const older = checkpoints[3]!;
  await page.goto(`${stack.agent.url}/studio?area=timeline&thread=${threadId}&checkpoint=${older}`);
  await page.getByTestId("checkpoint-view").waitFor();
  assert.equal(await shownCheckpoint(), older);
  assert.equal(await page.getByTestId("checkpoint-row").and(page.locator(".selected")).count(), 1);

  const oldest = checkpoints.at(-2)!;
  assert.ok(checkpoints.indexOf(oldest) >= 50, `the thread has ${checkpoints.length} checkpoints`);
  await page.goto(`${stack.agent.url}/studio?area=timeline&thread=${threadId}&checkpoint=${oldest}`);
  await page.waitForFunction((id) => document.querySelector("[data-testid=checkpoint-id]")?.textContent === id, oldest);
  await page.reload();
  await page.waitForFunction((id) => document.querySelector("[data-testid=checkpoint-id]")?.textContent === id, oldest);
});

test("back and forward walk areas, threads and checkpoints", async () => {
  await page.goto(`${stack.agent.url}/studio`);
  await page.getByTestId("graph-view").waitFor();
  await page.getByTestId("area-threads").click();
  assert.equal(query().get("area"), "threads");
  await page.getByTestId("thread-row").filter({ hasText: "Deep link one" }).click();
  await page.getByTestId("thread-id").waitFor();
  assert.equal(query().get("thread"), threadId);
  await page.getByTestId("open-timeline").click();
  await page.getByTestId("checkpoint-view").waitFor();
  assert.equal(query().get("area"), "timeline");
  await page.getByTestId("checkpoint-row").nth(2).click();
  await page.waitForFunction(
    (id) => document.querySelector("[data-testid=checkpoint-id]")?.textContent === id,
    checkpoints[2]!,
  );
  assert.equal(query().get("checkpoint"), checkpoints[2]);

  await page.goBack();
  await page.waitForFunction(
    (id) => document.querySelector("[data-testid=checkpoint-id]")?.textContent === id,
    checkpoints[0]!,
  );
  assert.equal(query().get("checkpoint"), null);
  await page.goBack();
  await page.getByTestId("thread-id").waitFor();
  assert.equal(await page.getByTestId("area-threads").getAttribute("aria-selected"), "true");
  assert.equal(await page.getByTestId("thread-id").textContent(), threadId);
  await page.goBack();
  assert.equal(query().get("thread"), null);
  await page.goBack();
  await page.getByTestId("graph-view").waitFor();
  await page.goForward();
  await page.goForward();
  await page.goForward();
  await page.goForward();
  await page.waitForFunction(
    (id) => document.querySelector("[data-testid=checkpoint-id]")?.textContent === id,
    checkpoints[2]!,
  );
  assert.equal(await page.getByTestId("area-timeline").getAttribute("aria-selected"), "true");
});
