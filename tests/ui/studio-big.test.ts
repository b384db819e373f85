/**
 * The studio stays usable on big threads, in real Chromium against `agentcli dev`: a thread of
 * 1,000 checkpoints (built through the API with `updateState`) is paged into the timeline and
 * only the rows in view are in the page; a run streaming 2,000 tokens shows every event while
 * the event list keeps only its visible rows in the page.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { startUiStack, type UiStack } from "./_stack.ts";
import { area, eventually, openStudio, sdk } from "./_studio.ts";

let stack: UiStack;
let page: Page;

before(async () => {
  stack = await startUiStack("basic");
  page = await (await stack.browser.context({ width: 1440, height: 900 })).newPage();
  await openStudio(page, stack.agent.url);
});
after(async () => {
  await stack?.close();
});

test("a thread of 1,000 checkpoints: paginated history, virtualised rows, any checkpoint opens", async () => {
  const client = sdk(stack.agent.url);
  const thread = await client.threads.create({ metadata: { size: "big" } });
  for (let i = 0; i < 1000; i++) {
    await client.threads.updateState(thread.thread_id, {
      values: { todos: [{ content: `step ${i}`, status: "pending" }] },
      asNode: "model_request",
    });
  }
  await area(page, "threads");
  await page.getByTestId("thread-metadata").fill('{"size": "big"}');
  await page.getByRole("button", { name: "Search" }).click();
  await eventually(async () => (await page.getByTestId("thread-row").count()) === 1);
  await page.getByTestId("thread-row").click();
  await page.getByTestId("open-timeline").click();
  const count = page.getByTestId("history-count");
  await eventually(async () => (await count.textContent())?.startsWith("50+"));
  assert.match(await page.getByTestId("state-channels").textContent() ?? "", /step 999/);
  // Scroll to the end until every page is loaded.
  const list = page.getByTestId("history-rows");
  await eventually(async () => {
    await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
    return (await count.textContent())?.match(/^(\d+) checkpoints/)?.[1] === "1000";
  });
  const rendered = await page.getByTestId("checkpoint-row").count();
  assert.ok(rendered < 60, `only the rows in view are in the page (${rendered})`);
  await page.getByTestId("checkpoint-row").last().click();
  await eventually(async () => (await page.getByTestId("state-channels").textContent())?.includes("step 0"));
  assert.match(await page.getByTestId("state-diff").textContent() ?? "", /todos/);
});

test("a run streaming 2,000 tokens: every event arrives, the list keeps only its visible rows", async () => {
  // 2,000 tokens of 6 characters each, streamed as 2,000 chunks (one per token).
  const words = Array.from({ length: 2000 }, (_, i) => `w${String(i).padStart(4, "0")} `).join("");
  stack.model.script({ text: words, tokens: 2000 });
  await area(page, "threads");
  await page.getByTestId("thread-new").click();
  await page.getByTestId("run-input").fill(JSON.stringify({ messages: [{ role: "user", content: "Talk a lot" }] }));
  await page.getByTestId("run-start").click();
  await eventually(async () =>
    (await page.getByTestId("run-row").locator(".badge").first().textContent()) === "success"
  );
  const events = Number((await page.getByTestId("event-count").textContent())!.split(" ")[0]);
  assert.ok(events >= 2000, `every token arrived as an event (${events})`);
  const rows = await page.getByTestId("event-rows").getByRole("button").count();
  assert.ok(rows < 60, `only the rows in view are in the page (${rows})`);
  // Still responsive: open the last event.
  await page.getByTestId("event-rows").getByRole("button").last().click();
  await page.locator(".event-detail").waitFor();
  await page.getByTestId("area-timeline").click();
  await eventually(async () => (await page.getByTestId("state-messages").textContent())?.includes("w1999"));
});
