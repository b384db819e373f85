/**
 * The studio at /studio in real Chromium against `agentcli dev` on `fixtures/approvals`
 * (`write_file` needs a person's approval) with the scripted model server: the graph with the
 * running node highlighted, threads and runs (start, live events, cancel, join, search),
 * the timeline (state, diff, fork from an edited checkpoint with `as_node`, rerun from a
 * checkpoint) and resuming an approval gate from the studio.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { RecordedRequest } from "../fixtures/model-server/server.ts";
import { startUiStack, type UiStack } from "./_stack.ts";
import { area, eventually, openStudio, sdk, shootBoth } from "./_studio.ts";

let stack: UiStack;
let page: Page;
let threadId = "";

before(async () => {
  stack = await startUiStack("approvals");
  page = await (await stack.browser.context({ width: 1440, height: 900 })).newPage();
  await openStudio(page, stack.agent.url);
});
after(async () => {
  await stack?.close();
});

async function startRun(prompt: string): Promise<void> {
  await page.getByTestId("run-input").fill(JSON.stringify({ messages: [{ role: "user", content: prompt }] }));
  await page.getByTestId("run-start").click();
}

/** A scripted reply's test: the request's last message is this user text. */
function lastIs(text: string) {
  return (r: RecordedRequest) => r.messages.at(-1)?.role === "user" && r.messages.at(-1)?.content === text;
}

/** New thread in the Threads area; its id once the page shows it. */
async function newThread(): Promise<string> {
  const before = await page.getByTestId("thread-id").textContent().catch(() => null);
  await page.getByTestId("thread-new").click();
  return await eventually(async () => {
    const id = await page.getByTestId("thread-id").textContent();
    return id && id !== before ? id : null;
  });
}

async function runStatuses(): Promise<string[]> {
  return await page.getByTestId("run-row").locator(".badge").allTextContents();
}

test("graph: the assistant's graph is drawn; subgraphs are asked for with xray", async () => {
  await area(page, "graph");
  await page.getByTestId("graph-node-model_request").waitFor();
  assert.equal(await page.getByTestId("graph-node-tools").count(), 1);
  assert.equal(await page.getByTestId("graph-node-__start__").count(), 1);
  const xray = page.waitForRequest((r) => /\/graph\?xray=true/.test(r.url()));
  await page.getByTestId("graph-xray").check();
  await xray;
  await page.getByTestId("graph-node-model_request").waitFor();
  await shootBoth(page, "graph");
});

test("threads and runs: a run streams live, the graph highlights its node, the thread is titled and searchable", async () => {
  stack.model.script({ when: lastIs("Plan the trip"), text: "Here is the plan.", delayMs: 2500 });
  await area(page, "threads");
  threadId = await newThread();
  await startRun("Plan the trip");
  await area(page, "graph");
  await page.locator('[data-testid="graph-node-model_request"][data-current="true"]').waitFor();
  assert.match(await page.getByTestId("graph-current").textContent() ?? "", /Running: model_request/);
  await shootBoth(page, "graph-running");
  await area(page, "threads");
  await eventually(async () => (await runStatuses())[0] === "success");
  assert.ok(Number((await page.getByTestId("event-count").textContent())!.split(" ")[0]) > 3, "events arrived");
  const rows = page.getByTestId("thread-row");
  await eventually(async () => (await rows.first().textContent())?.includes("Plan the trip"));
  await page.getByTestId("event-rows").getByRole("button").first().click();
  await shootBoth(page, "threads");

  // Search: by status, then by metadata.
  const client = sdk(stack.agent.url);
  await client.threads.create({ metadata: { project: "apollo" } });
  await page.getByTestId("thread-status").selectOption("busy");
  await eventually(async () => (await rows.count()) === 0);
  await page.getByTestId("thread-status").selectOption("idle");
  await eventually(async () => (await rows.count()) >= 2);
  await page.getByTestId("thread-metadata").fill('{"project": "apollo"}');
  await page.getByRole("button", { name: "Search" }).click();
  await eventually(async () => (await rows.count()) === 1);
  await page.getByTestId("thread-metadata").fill("{oops");
  await page.getByRole("button", { name: "Search" }).click();
  assert.match(
    await page.getByTestId("thread-list").getByRole("alert").textContent() ?? "",
    /Metadata is not valid JSON/,
  );
  await page.getByTestId("thread-metadata").fill("");
  await page.getByTestId("thread-status").selectOption("");
});

test("threads and runs: cancel a streaming run; join a run started elsewhere", async () => {
  const client = sdk(stack.agent.url);
  stack.model.script({ when: lastIs("Take your time"), text: "Too late.", delayMs: 30_000 });
  const asked = stack.model.requests.length;
  await startRun("Take your time");
  await eventually(async () => stack.model.requests.slice(asked).some(lastIs("Take your time")));
  await page.getByTestId("run-cancel").click();
  await eventually(async () => ["interrupted", "error"].includes((await runStatuses())[0] ?? ""));
  assert.equal(await page.getByTestId("run-cancel").count(), 0);

  stack.model.script({ when: lastIs("Started by a script"), text: "Joined and finished.", delayMs: 3000 });
  const run = await client.runs.create(threadId, "agent", {
    input: { messages: [{ role: "user", content: "Started by a script" }] },
    multitaskStrategy: "enqueue",
  });
  await page.getByTestId("run-row").filter({ hasText: run.run_id.slice(0, 8) }).getByRole("button", { name: "Join" })
    .click();
  await page.getByTestId("run-cancel").waitFor();
  await eventually(async () => (await runStatuses())[0] === "success");
  const row = page.getByTestId("run-row").filter({ hasText: run.run_id.slice(0, 8) });
  assert.match(await row.textContent() ?? "", /enqueue/);
  assert.ok(Number((await page.getByTestId("event-count").textContent())!.split(" ")[0]) > 0, "joined events arrived");
});

test("timeline: state, diff, fork from an edited checkpoint (as_node), rerun from a checkpoint", async () => {
  const client = sdk(stack.agent.url);
  await page.getByTestId("open-timeline").click();
  await page.getByTestId("checkpoint-view").waitFor();
  assert.match(await page.getByTestId("state-messages").textContent() ?? "", /Joined and finished\./);
  await shootBoth(page, "timeline");

  // Fork: edit the latest checkpoint's state and write it as the model node.
  const before = (await client.threads.getHistory(threadId, { limit: 1 }))[0]!;
  const editor = page.getByTestId("state-editor");
  await editor.getByLabel("State values (JSON)").fill(
    JSON.stringify({ todos: [{ content: "Edited in the studio", status: "pending" }] }),
  );
  await editor.getByLabel("As node").selectOption("model_request");
  await editor.getByTestId("fork").click();
  const forked = await eventually(async () => {
    const top = (await client.threads.getHistory(threadId, { limit: 1 }))[0]!;
    return top.checkpoint.checkpoint_id !== before.checkpoint.checkpoint_id ? top : null;
  });
  assert.deepEqual((forked.values as { todos: unknown }).todos, [{
    content: "Edited in the studio",
    status: "pending",
  }]);
  assert.equal(forked.parent_checkpoint?.checkpoint_id, before.checkpoint.checkpoint_id);
  assert.equal((forked.metadata as { source?: string }).source, "update");
  await eventually(async () =>
    (await page.getByTestId("checkpoint-id").textContent()) === forked.checkpoint.checkpoint_id
  );
  assert.match(await page.getByTestId("state-channels").textContent() ?? "", /Edited in the studio/);
  assert.match(await page.getByTestId("state-diff").textContent() ?? "", /todos[\s\S]*Edited in the studio/);
  await shootBoth(page, "timeline-fork");

  // Rerun from the first run's input checkpoint: a new branch with a new answer.
  stack.model.script({ when: lastIs("Plan the trip"), text: "A second plan." });
  const list = page.getByTestId("history-rows");
  await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await page.getByTestId("checkpoint-row").filter({ hasText: "#-1 input" }).last().click();
  await page.getByTestId("rerun").click();
  await eventually(async () =>
    (await page.getByTestId("state-messages").first().textContent())?.includes("A second plan.")
  );
  const top = (await client.threads.getHistory(threadId, { limit: 1 }))[0]!;
  const texts = JSON.stringify((top.values as { messages: unknown[] }).messages);
  assert.match(texts, /A second plan\./);
  assert.doesNotMatch(texts, /Joined and finished/, "the rerun branch starts before the later runs");
});

test("approvals: an interrupt shows its payload and resumes with Approve", async () => {
  stack.model.script({
    when: lastIs("Write the draft"),
    toolCalls: [{ name: "write_file", args: { file_path: "/draft.md", content: "studio draft" } }],
  });
  await area(page, "threads");
  const id = await newThread();
  await startRun("Write the draft");
  await eventually(async () => (await runStatuses())[0] === "interrupted" || (await runStatuses())[0] === "success");
  await page.getByTestId("open-timeline").click();
  const interrupts = page.getByTestId("interrupts");
  await interrupts.waitFor();
  assert.match(await interrupts.getByTestId("interrupt-payload").textContent() ?? "", /write_file[\s\S]*studio draft/);
  await shootBoth(page, "approval");
  stack.model.script({ when: (r) => r.messages.at(-1)?.role === "tool", text: "Saved the draft after your approval." });
  await interrupts.getByRole("button", { name: "Approve" }).click();
  await eventually(async () =>
    (await page.getByTestId("state-messages").textContent())?.includes("Saved the draft after your approval.")
  );
  const state = await sdk(stack.agent.url).threads.getState(id);
  assert.equal(state.tasks.flatMap((t) => t.interrupts ?? []).length, 0);
  assert.match(JSON.stringify(state.values), /studio draft/, "the approved write ran");
});

async function interruptedThread(prompt: string, content: string) {
  stack.model.script({
    when: lastIs(prompt),
    toolCalls: [{ name: "write_file", args: { file_path: "/draft.md", content } }],
  });
  await area(page, "threads");
  const id = await newThread();
  await startRun(prompt);
  // The run ends (LangGraph marks it a success); its thread is interrupted.
  await eventually(async () => (await runStatuses())[0] === "success");
  await eventually(async () =>
    (await page.getByTestId("thread-row").filter({ hasText: prompt }).textContent())?.includes("interrupted")
  );
  await page.getByTestId("open-timeline").click();
  await page.getByTestId("interrupts").waitFor();
  return id;
}

test("approvals: Edit runs the edited arguments; Reject sends the reason to the agent", async () => {
  const client = sdk(stack.agent.url);
  const edited = await interruptedThread("Write the second draft", "version two");
  const interrupts = page.getByTestId("interrupts");
  await interrupts.getByRole("button", { name: "Edit" }).click();
  await interrupts.getByLabel("Edited arguments (JSON)").fill("{ not json");
  await interrupts.getByRole("button", { name: "Save and approve" }).click();
  assert.match(await interrupts.getByRole("alert").textContent() ?? "", /not valid JSON/);
  await interrupts.getByLabel("Edited arguments (JSON)").fill(
    JSON.stringify({ file_path: "/draft.md", content: "edited in the studio" }),
  );
  stack.model.script({ when: (r) => r.messages.at(-1)?.role === "tool", text: "Saved your edited draft." });
  await interrupts.getByRole("button", { name: "Save and approve" }).click();
  await eventually(async () => (await page.getByTestId("state-messages").textContent())?.includes("Saved your edited"));
  const values = JSON.stringify((await client.threads.getState(edited)).values);
  assert.match(values, /edited in the studio/);
  assert.doesNotMatch(values, /"content":"version two"/, "the original arguments did not run");

  await interruptedThread("Write the third draft", "version three");
  await interrupts.getByLabel("Reason").fill("Not now, the outline is not approved yet");
  stack.model.script({ when: (r) => r.messages.at(-1)?.role === "tool", text: "Understood, I did not write it." });
  await interrupts.getByRole("button", { name: "Reject" }).click();
  await eventually(async () => (await page.getByTestId("state-messages").textContent())?.includes("did not write it"));
  const toolResult = stack.model.requests.at(-1)!.messages.at(-1)!;
  assert.equal(toolResult.role, "tool");
  assert.match(toolResult.content, /Not now, the outline is not approved yet/);
});
