/**
 * No response carries a stack trace or an install path, on a project hosted as `serve` hosts
 * it: a tool call whose arguments fail the tool's schema becomes a short message for the
 * model and the client (in the thread, its state, history and every stream mode), and an
 * upstream error that quotes a stack reaches the run's error, its stream, MCP and A2A
 * without it. The scripted model server plays the model.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type Task, TaskState } from "@a2a-js/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type HostedProject, hostProject } from "./_host.ts";
import { connectA2A, connectMcp, userMessage } from "./_setup.ts";

const KEY = "helper-key-0123456789";
const ROOT = new URL("../../", import.meta.url).pathname;
const HEADERS = { "x-api-key": KEY };
const INVALID =
  "Invalid arguments for read_file: file_path: expected string, received number. Call it again with arguments that match its schema.";
/** An upstream error message that quotes its own stack, as some libraries' messages do. */
const STACKY =
  `upstream exploded\n    at handler (file:///srv/vendor/node_modules/sdk/index.js:10:5)\n    at ${ROOT}core/x.ts:1:1`;

let model: ModelServer;
let helper: HostedProject;

before(async () => {
  model = await startModelServer();
  helper = await hostProject("protocols-helper", {
    OPENAI_API_KEY: "test-key",
    OPENAI_BASE_URL: model.openaiBaseUrl,
    PLATFORM_API_KEY: KEY,
  });
});
after(async () => {
  await helper?.close();
  await model?.close();
});

/** What in `text` looks like a stack frame or an install path. */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (const re of [/\\n\s+at |\n\s+at /, /\bat \S+ \((?:file:|\/)/, /node_modules/, /file:\/\//]) {
    const m = re.exec(text);
    if (m) found.push(text.slice(Math.max(0, m.index - 80), m.index + 80));
  }
  if (text.includes(ROOT)) found.push(ROOT);
  return found;
}

async function post(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${helper.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...HEADERS },
    body: JSON.stringify(body),
  });
  return res.text();
}

async function everything(threadId: string): Promise<string> {
  const parts: string[] = [];
  for (const path of [`/threads/${threadId}`, `/threads/${threadId}/state`, `/threads/${threadId}/runs`]) {
    parts.push(await (await fetch(`${helper.url}${path}`, { headers: HEADERS })).text());
  }
  parts.push(await post(`/threads/${threadId}/history`, {}));
  return parts.join("\n");
}

test("a tool call whose arguments fail the schema: a short message for the model and the client", async () => {
  model.script(
    { when: "MARKER-HELPER", toolCalls: [{ name: "read_file", args: { file_path: 123 } }] },
    { when: "MARKER-HELPER", text: "done" },
  );
  const client = new Client({ apiUrl: helper.url, apiKey: KEY });
  const thread = await client.threads.create();
  const stream = await post(`/threads/${thread.thread_id}/runs/stream`, {
    assistant_id: "helper",
    input: { messages: [{ role: "user", content: "read it" }] },
    stream_mode: ["values", "updates", "messages-tuple", "events", "debug"],
  });
  assert.doesNotMatch(stream, /event: error/);
  assert.deepEqual(leaks(stream), [], "stream");
  const state = await client.threads.getState(thread.thread_id);
  const messages = (state.values as { messages: Array<{ type: string; content: unknown; status?: string }> }).messages;
  const tool = messages.find((m) => m.type === "tool")!;
  assert.equal(tool.content, INVALID);
  assert.equal(tool.status, "error");
  assert.equal(messages.at(-1)!.content, "done");
  // The model was told the same.
  const told = model.requests.at(-1)!.messages.find((m) => m.role === "tool");
  assert.equal(told?.content, INVALID);
  assert.deepEqual(leaks(await everything(thread.thread_id)), [], "thread, state, runs, history");
});

test("an upstream error that quotes a stack: the run's error, its stream, MCP and A2A carry its message only", async () => {
  const error = { status: 400, message: STACKY };
  model.script({ when: "MARKER-HELPER", error }, { when: "MARKER-HELPER", error }, { when: "MARKER-HELPER", error });
  const client = new Client({ apiUrl: helper.url, apiKey: KEY });

  const thread = await client.threads.create();
  const stream = await post(`/threads/${thread.thread_id}/runs/stream`, {
    assistant_id: "helper",
    input: { messages: [{ role: "user", content: "hi" }] },
    stream_mode: ["values", "events", "debug"],
  });
  assert.match(stream, /event: error[\s\S]*upstream exploded/);
  assert.deepEqual(leaks(stream), [], "stream");
  const all = await everything(thread.thread_id);
  assert.match(all, /upstream exploded/);
  assert.deepEqual(leaks(all), [], "thread, state, runs, history");

  const mcp = await connectMcp(helper.url, HEADERS);
  try {
    const result = await mcp.callTool({ name: "helper", arguments: { message: "hi" } }) as CallToolResult;
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    assert.equal(result.isError, true);
    assert.match(text, /upstream exploded/);
    assert.deepEqual(leaks(JSON.stringify(result)), [], "MCP");
  } finally {
    await mcp.close();
  }

  const a2a = await connectA2A(helper.url, HEADERS);
  const task = await a2a.sendMessage({
    message: userMessage("hi"),
    configuration: undefined,
    metadata: undefined,
    tenant: "",
  }) as Task;
  assert.equal(task.status?.state, TaskState.TASK_STATE_FAILED);
  assert.match(JSON.stringify(task), /upstream exploded/);
  assert.deepEqual(leaks(JSON.stringify(task)), [], "A2A");
  assert.deepEqual(model.pending(), []);
});
