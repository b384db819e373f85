/**
 * The studio's run trace ("inside a run") in real Chromium against `agentcli dev` on
 * `fixtures/basic` (a `researcher` subagent): the run's spans from
 * `GET /threads/{thread_id}/runs/{run_id}/trace` as a tree (the model calls, the `task` tool
 * call with the subagent nested under it), each with input, output, latency and token usage.
 * A sandbox `execute` call (on `fixtures/sandbox`, approved) shows its output and exit code; an
 * MCP tool call (on `fixtures/mcp`, the test MCP server's `lookup_fact`) names its server and tool.
 * Needs the traces endpoint (helper "traces"); run it once that is merged.
 */
import { after, before, test } from "node:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { RecordedRequest } from "../fixtures/model-server/server.ts";
import { startMcpServers } from "../fixtures/mcp-servers/server.ts";
import { startUiStack, type UiStack } from "./_stack.ts";
import { area, eventually, openStudio, sdk, shootBoth } from "./_studio.ts";

let stack: UiStack;
let page: Page;

const isSubagent = (r: RecordedRequest) => r.system.includes("researcher subagent");
const isMain = (r: RecordedRequest) => !isSubagent(r);

before(async () => {
  stack = await startUiStack("basic");
  page = await (await stack.browser.context({ width: 1440, height: 900 })).newPage();
});
after(async () => {
  await stack?.close();
});

async function indent(row: ReturnType<Page["getByTestId"]>): Promise<number> {
  return Number.parseFloat(await row.first().evaluate((el) => (el as HTMLElement).style.paddingLeft));
}

test("trace: model calls, a tool call and its subagent as a tree, with input, output, latency and tokens", async () => {
  stack.model.script(
    {
      when: isMain,
      toolCalls: [{ name: "task", args: { description: "Find one source", subagent_type: "researcher" } }],
    },
    { when: isSubagent, text: "Found Alpha (2024)." },
    { when: isMain, text: "The researcher found Alpha." },
  );
  const client = sdk(stack.agent.url);
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "Research one source" }] },
  });
  await client.runs.join(thread.thread_id, run.run_id);
  await openStudio(page, stack.agent.url);
  await area(page, "threads");
  await page.getByTestId("thread-row").filter({ hasText: "Research one source" }).click();
  await page.getByTestId("run-row").filter({ hasText: run.run_id.slice(0, 8) }).getByRole("button", { name: "Trace" })
    .click();
  const tree = page.getByTestId("trace-tree");
  await tree.getByTestId("span-subagent").first().waitFor();
  assert.equal(await page.getByTestId("trace-missing").count(), 0);
  assert.ok(await tree.getByTestId("span-run").count() >= 1, "the run is the root");
  assert.ok(await tree.getByTestId("span-model").count() >= 3, "two model calls of the agent, one of the subagent");
  // deepagents' `task` tool call is the subagent's span (kind "subagent", named by its type).
  const task = tree.getByTestId("span-subagent").filter({ hasText: "researcher" });
  assert.ok(await task.count() >= 1, "the task tool call, as the researcher subagent's span");
  assert.ok(
    await indent(tree.getByTestId("span-subagent")) > await indent(tree.getByTestId("span-run")),
    "the subagent is nested inside the run",
  );
  assert.ok(
    await indent(tree.getByTestId("span-model").filter({ hasText: /researcher|model/ }).last()) >=
      await indent(tree.getByTestId("span-subagent")),
    "the subagent's model call is nested under it",
  );

  await tree.getByTestId("span-model").first().getByRole("button").last().click();
  const detail = page.getByTestId("span-detail");
  assert.match(await detail.textContent() ?? "", /\d+ ms/);
  assert.match(await detail.textContent() ?? "", /tokens 10 in \/ 5 out \/ 15 total/);
  assert.match(await detail.getByTestId("span-input").textContent() ?? "", /Research one source/);
  await shootBoth(page, "trace");

  // Collapsing the root hides the rest of the tree.
  await tree.getByTestId("span-run").first().getByRole("button", { name: "Collapse" }).click();
  await eventually(async () => (await tree.getByTestId("span-model").count()) === 0);
});

test("trace: a sandbox execute call shows its command, output and exit code", async () => {
  // A dev server running as root runs local sandboxes as "nobody", who must be able to enter this.
  const sandboxDir = mkdtempSync(join(tmpdir(), "agentcli-ui-sandboxes-"));
  chmodSync(sandboxDir, 0o711);
  const box = await startUiStack("sandbox", {
    args: ["--sandbox", "local"],
    env: { AGENTCLI_SANDBOX_DIR: sandboxDir },
  });
  try {
    box.model.script(
      {
        when: "Count the files",
        toolCalls: [{ name: "execute", args: { command: "echo hello from the sandbox; exit 3" } }],
      },
      { when: (r) => r.messages.at(-1)?.role === "tool", text: "The command failed with exit code 3." },
    );
    const client = sdk(box.agent.url);
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "Count the files" }] },
    });
    await client.runs.join(thread.thread_id, first.run_id);
    const resumed = await client.runs.create(thread.thread_id, "agent", {
      command: { resume: { decisions: [{ type: "approve" }] } },
    });
    await client.runs.join(thread.thread_id, resumed.run_id);
    const p = await (await box.browser.context({ width: 1440, height: 900 })).newPage();
    await openStudio(p, box.agent.url);
    await area(p, "threads");
    await p.getByTestId("thread-row").filter({ hasText: "Count the files" }).click();
    await p.getByTestId("run-row").filter({ hasText: resumed.run_id.slice(0, 8) }).getByRole("button", {
      name: "Trace",
    })
      .click();
    const execute = p.getByTestId("trace-tree").getByTestId("span-tool").filter({ hasText: "execute" });
    await execute.first().waitFor();
    await execute.first().getByRole("button").last().click();
    const detail = p.getByTestId("span-detail");
    assert.match(await detail.textContent() ?? "", /exit code 3/);
    assert.match(await detail.getByTestId("span-input").textContent() ?? "", /echo hello from the sandbox; exit 3/);
    assert.match(await detail.getByTestId("span-output").textContent() ?? "", /hello from the sandbox/);
    await shootBoth(p, "trace-execute");
  } finally {
    await box.close();
    rmSync(sandboxDir, { recursive: true, force: true });
  }
});

test("trace: an MCP tool call shows its server, tool, input and output", async () => {
  const mcp = await startMcpServers();
  const box = await startUiStack("mcp", { env: { FACTS_MCP_URL: mcp.httpUrl } });
  try {
    box.model.script(
      { when: "MARKER-MCP", toolCalls: [{ name: "lookup_fact", args: { topic: "tides" } }] },
      { when: (r) => r.messages.at(-1)?.role === "tool", text: "Tides are caused by the moon." },
    );
    const client = sdk(box.agent.url);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "Why are there tides?" }] },
    });
    await client.runs.join(thread.thread_id, run.run_id);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "success");
    const p = await (await box.browser.context({ width: 1440, height: 900 })).newPage();
    await p.goto(`${box.agent.url}/studio?area=trace&thread=${thread.thread_id}&run=${run.run_id}`);
    const fact = p.getByTestId("trace-tree").getByTestId("span-tool").filter({ hasText: "lookup_fact" });
    await fact.first().waitFor();
    await fact.first().getByRole("button").last().click();
    const detail = p.getByTestId("span-detail");
    assert.equal(await detail.getByTestId("span-mcp").textContent(), "MCP server facts, tool lookup_fact");
    assert.match(await detail.getByTestId("span-input").textContent() ?? "", /"topic": "tides"/);
    assert.match(await detail.getByTestId("span-output").textContent() ?? "", /FACT-42: tides are caused by the moon/);
    await shootBoth(p, "trace-mcp");
  } finally {
    await box.close();
    await mcp.close();
  }
});
