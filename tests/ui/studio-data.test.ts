/**
 * The studio's store and assistants areas, and its connection field, in real Chromium against
 * `agentcli dev` (`fixtures/approvals`): a `/memories/` item viewed and edited; an assistant
 * created, its config edited into a new version; the studio pointed at another agent server
 * (a second `dev` on `fixtures/basic`) by its base URL; a subgraph expanded in the graph.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { startUiStack, type UiStack } from "./_stack.ts";
import { type RunningAgent, startAgent } from "./_agent.ts";
import { area, eventually, openStudio, sdk, shootBoth } from "./_studio.ts";

let stack: UiStack;
let page: Page;
let other: RunningAgent | null = null;

before(async () => {
  // A second graph whose `child` node is a compiled subgraph, for the graph's xray.
  const subgraph = fileURLToPath(new URL("../fixtures/graphs/two-step-subgraph.ts", import.meta.url));
  stack = await startUiStack("approvals", { args: ["--graph", `sub=${subgraph}:graph`] });
  page = await (await stack.browser.context({ width: 1440, height: 900 })).newPage();
  await openStudio(page, stack.agent.url);
});
after(async () => {
  await other?.close();
  await stack?.close();
});

test("graph: a subgraph node expands into its own nodes with xray", async () => {
  await area(page, "graph");
  const sub = await page.getByTestId("assistant-picker").locator("option").filter({ hasText: "(sub)" }).getAttribute(
    "value",
  );
  await page.getByTestId("assistant-picker").selectOption(sub!);
  await page.getByTestId("graph-node-child").waitFor();
  assert.equal(await page.getByTestId("graph-node-child:plan").count(), 0);
  await page.getByTestId("graph-xray").check();
  await page.getByTestId("graph-node-child:plan").waitFor();
  await page.getByTestId("graph-node-child:act").waitFor();
  assert.equal(await page.getByTestId("graph-node-child").count(), 0, "the subgraph node is drawn as its nodes");
  await shootBoth(page, "graph-subgraph");
  await page.getByTestId("graph-xray").uncheck();
  const agent = await page.getByTestId("assistant-picker").locator("option").filter({ hasText: "(agent)" })
    .getAttribute("value");
  await page.getByTestId("assistant-picker").selectOption(agent!);
});

test("store: namespaces (the agent's /memories/ included), an item viewed and edited", async () => {
  const client = sdk(stack.agent.url);
  await client.store.putItem(["memories", "dev-user"], "/memories/preferences.md", { content: "Likes tea." });
  await client.store.putItem(["notes"], "todo", { text: "call Ada" });
  await area(page, "store");
  await page.getByTestId("namespace-row").filter({ hasText: "memories / dev-user" }).click();
  await page.getByTestId("item-row").filter({ hasText: "/memories/preferences.md" }).click();
  assert.match(await page.getByTestId("item-value").textContent() ?? "", /Likes tea\./);
  await page.getByLabel("Item value (JSON)").fill(JSON.stringify({ content: "Likes coffee now." }));
  await page.getByTestId("item-save").click();
  await eventually(async () => (await page.getByTestId("item-value").textContent())?.includes("Likes coffee now."));
  const item = await client.store.getItem(["memories", "dev-user"], "/memories/preferences.md");
  assert.deepEqual(item?.value, { content: "Likes coffee now." });
  await page.getByLabel("Item value (JSON)").fill("{not json");
  await page.getByTestId("item-save").click();
  assert.match(await page.getByRole("alert").first().textContent() ?? "", /The value is not valid JSON/);
  await page.getByLabel("Item value (JSON)").fill(JSON.stringify({ content: "Likes coffee now." }));
  await shootBoth(page, "store");
});

test("assistants: create one, edit its config into a new version, see its versions", async () => {
  const client = sdk(stack.agent.url);
  await area(page, "assistants");
  await page.getByTestId("assistant-row").filter({ hasText: "ui-approvals" }).click();
  await page.getByLabel("New assistant name").fill("Terse reviewer");
  await page.getByRole("button", { name: "Create from this graph" }).click();
  await eventually(async () =>
    (await page.getByTestId("assistant-row").filter({ hasText: "Terse reviewer" }).count()) === 1
  );
  await eventually(async () =>
    (await page.getByTestId("assistant-config").textContent())?.includes('"graph_id": "agent"')
  );
  await page.getByLabel("Assistant config (JSON)").fill(
    JSON.stringify({ config: { configurable: { tone: "terse" } }, metadata: { team: "review" } }),
  );
  await page.getByTestId("assistant-new-version").click();
  await eventually(async () => (await page.getByTestId("assistant-version").textContent()) === "v2");
  await eventually(async () => (await page.getByTestId("assistant-versions").locator("tbody tr").count()) === 2);
  const [made] = await client.assistants.search({ metadata: { team: "review" } });
  assert.equal(made?.name, "Terse reviewer");
  assert.deepEqual(made?.config.configurable, { tone: "terse" });
  assert.equal((await client.assistants.getVersions(made!.assistant_id)).length, 2);
  await shootBoth(page, "assistants");
});

test("connection: the studio inspects another agent server by its base URL", async () => {
  other = await startAgent("basic", { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: stack.model.openaiBaseUrl });
  await area(page, "graph");
  await page.getByTestId("connection-toggle").click();
  const form = page.getByTestId("connection-form");
  await form.getByLabel("Base URL").fill("http://127.0.0.1:9");
  await form.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("alert").filter({ hasText: "Check the connection" }).waitFor();
  await page.getByTestId("connection-toggle").click();
  await form.getByLabel("Base URL").fill(other.url.replace("127.0.0.1", "localhost"));
  await form.getByLabel("API key (x-api-key)").fill("not-needed-by-anonymous");
  await form.getByRole("button", { name: "Connect" }).click();
  await eventually(async () => (await page.getByTestId("assistant-picker").textContent())?.includes("ui-basic"));
  await page.getByTestId("graph-node-model_request").waitFor();
  assert.match(await page.getByTestId("connection-toggle").textContent() ?? "", /localhost/);
  await shootBoth(page, "connection");
  // Back to this server: an empty URL.
  await page.getByTestId("connection-toggle").click();
  await form.getByLabel("Base URL").fill("");
  await form.getByRole("button", { name: "Connect" }).click();
  await eventually(async () => (await page.getByTestId("assistant-picker").textContent())?.includes("ui-approvals"));
});

test("trace: a server without the run-trace endpoint is named in the view", async (t) => {
  const client = sdk(stack.agent.url);
  const thread = await client.threads.create();
  stack.model.script({ text: "Short answer." });
  const run = await client.runs.create(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "Trace me" }] },
  });
  await client.runs.join(thread.thread_id, run.run_id);
  const res = await fetch(`${stack.agent.url}/threads/${thread.thread_id}/runs/${run.run_id}/trace`);
  await res.body?.cancel();
  if (res.status !== 404) {
    t.skip("this server has the trace endpoint: tests/ui/studio-trace.test.ts covers the view");
    return;
  }
  await area(page, "threads");
  await page.getByTestId("thread-row").filter({ hasText: "Trace me" }).click();
  await page.getByTestId("run-row").first().getByRole("button", { name: "Trace" }).click();
  assert.match(await page.getByTestId("trace-missing").textContent() ?? "", /no run traces .*answered 404/);
});
