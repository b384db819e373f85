/**
 * End to end: two agentcli deployments in one process, each hosted as `serve` hosts a bundle.
 * The helper has no [auth] (callers send x-api-key); the delegator's `mcp.json` points at the
 * helper's `/mcp` with that key. The scripted model makes the delegator call the helper's
 * tool; the helper's own run answers; the delegator answers with it. Both runs are visible
 * in each deployment's Agent API.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type HostedProject, hostProject } from "./_host.ts";

const KEY = "helper-key-0123456789";
let model: ModelServer;
let helper: HostedProject;
let delegator: HostedProject;

before(async () => {
  model = await startModelServer();
  const modelEnv = { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.openaiBaseUrl };
  helper = await hostProject("protocols-helper", { ...modelEnv, PLATFORM_API_KEY: KEY });
  delegator = await hostProject("protocols-delegator", {
    ...modelEnv,
    HELPER_MCP_URL: `${helper.url}/mcp`,
    HELPER_API_KEY: KEY,
  });
});

after(async () => {
  await delegator?.close();
  await helper?.close();
  await model?.close();
});

test("an agent whose mcp.json points at another deployment's /mcp delegates to it", async () => {
  model.script(
    { when: "MARKER-DELEGATOR", toolCalls: [{ name: "helper", args: { message: "What is the capital of France?" } }] },
    { when: "MARKER-HELPER", text: "Paris." },
    { when: "MARKER-DELEGATOR", text: "The helper says the capital of France is Paris." },
  );
  const a = new Client({ apiUrl: delegator.url });
  const thread = await a.threads.create();
  const out = await a.runs.wait(thread.thread_id, "delegator", {
    input: { messages: [{ role: "user", content: "Capital of France?" }] },
  }) as { messages: Array<{ type: string; content: unknown; name?: string }> };
  assert.equal(out.messages.at(-1)!.content, "The helper says the capital of France is Paris.");
  const toolMessage = out.messages.find((m) => m.type === "tool");
  assert.equal(toolMessage?.name, "helper");
  assert.match(String(toolMessage?.content), /Paris\./);

  // The helper ran its own agent on the question, in a run of its own Agent API.
  const helperRequest = model.requests.find((r) => r.system.includes("MARKER-HELPER"));
  assert.equal(helperRequest?.messages.at(-1)?.content, "What is the capital of France?");
  const b = new Client({ apiUrl: helper.url, apiKey: KEY });
  const threads = await b.threads.search({ limit: 10 });
  assert.equal(threads.length, 1);
  const runs = await b.runs.list(threads[0]!.thread_id);
  assert.equal(runs.length, 1);
  assert.equal(runs[0]!.status, "success");
  assert.equal((runs[0]!.metadata as Record<string, unknown>).source, "mcp");
  assert.deepEqual(model.pending(), []);

  // Without the key the helper refuses the MCP endpoint like the rest of its API.
  const res = await fetch(`${helper.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: "{}",
  });
  assert.equal(res.status, 401);
});
