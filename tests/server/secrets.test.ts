/**
 * Secrets never leave: the deployment's secret values (sentinels here) and anything shaped
 * like a key are redacted from upstream errors before they reach a run's error, its stream,
 * the thread, the logs or a model's context. The agent's real graph runs against the local
 * OpenAI-wire model server, which answers the way a provider does: "Incorrect API key
 * provided: <the key it was sent>". (The server has no tracing spans to check.)
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgentGraph } from "../../core/harness/index.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { redact, REDACTED, registerSecrets, secretValues } from "../../core/kernel/redact.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { makeBundle, makeConfig, makeSubagent } from "../harness/_bundle.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

const KEY = `sk-sentinel${crypto.randomUUID().replaceAll("-", "")}`;
const TOKEN = `plainsentinel${crypto.randomUUID().slice(0, 12)}`;
const lines: string[] = [];
let model: ModelServer;
let t: TestServer;
let closeGraph: () => Promise<void>;

before(async () => {
  model = await startModelServer();
  const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: model.openaiBaseUrl, MY_SERVICE_TOKEN: TOKEN };
  registerSecrets(secretValues(env, ["MY_SERVICE_TOKEN"]));
  const built = await createAgentGraph({
    bundle: makeBundle(makeConfig({ subagents: [makeSubagent({ name: "helper" })] }), {
      "AGENTS.md": "Main agent. MARKER-MAIN",
      "subagents/helper/AGENTS.md": "You help. MARKER-HELPER",
    }),
    driver: new PluginDriver([...builtinPlugins]),
    env,
    checkpointer: new MemorySaver(),
    store: new InMemoryStore(),
  });
  closeGraph = () => built.close();
  const capture = (level: string) => (m: string, e?: unknown) =>
    lines.push(`${level} ${m} ${e instanceof Error ? `${e.message}\n${e.stack}` : e ?? ""}`);
  t = await startTestServer({
    graphs: { agent: async () => built.graph },
    log: { info: capture("info"), warn: capture("warn"), error: capture("error") },
  });
});
after(async () => {
  await t?.close();
  await closeGraph?.();
  await model?.close();
});

const leaks = (text: string) => [KEY, TOKEN, KEY.slice(3)].filter((s) => text.includes(s));

async function everything(threadId: string): Promise<string> {
  const parts: string[] = [];
  for (const path of [`/threads/${threadId}`, `/threads/${threadId}/state`, `/threads/${threadId}/runs`]) {
    parts.push(await (await fetch(`${t.url}${path}`)).text());
  }
  parts.push(
    await (await fetch(`${t.url}/threads/${threadId}/history`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    })).text(),
  );
  return parts.join("\n");
}

test("the shapes and the registered values are redacted", () => {
  assert.equal(redact(`401 Incorrect API key provided: ${KEY}.`), `401 Incorrect API key provided: ${REDACTED}.`);
  assert.equal(redact(`token ${TOKEN} refused`), `token ${REDACTED} refused`);
  assert.equal(redact("Authorization: Bearer abcdefghijklmnop123"), `Authorization: Bearer ${REDACTED}`);
  assert.equal(redact("call failed (api_key=zzzzzzzzzzzz)"), `call failed (api_key=${REDACTED})`);
  assert.equal(
    redact("AIzaSyA-1234567890abcdefghijklmnopqrstu gsk_abcdefghijklmnopqrstuvwx"),
    `${REDACTED} ${REDACTED}`,
  );
  assert.equal(
    redact("an ordinary sentence with a task-id and 12345678"),
    "an ordinary sentence with a task-id and 12345678",
  );
});

test("a model error quoting the key: not in the run's error, stream, thread, history or logs", async () => {
  model.script({
    when: "MARKER-MAIN",
    error: { status: 401, message: `Incorrect API key provided: {api_key}. Also ${TOKEN}.` },
  });
  const thread = await t.client.threads.create();
  const res = await fetch(`${t.url}/threads/${thread.thread_id}/runs/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "hi" }] },
      stream_mode: ["values", "updates", "messages-tuple", "events", "debug"],
    }),
  });
  const stream = await res.text();
  assert.match(stream, /event: error/);
  assert.match(stream, /Incorrect API key provided: \[redacted\]/, "the error still says what went wrong");
  for (const block of stream.split("\n\n")) assert.deepEqual(leaks(block), [], `stream: ${block.slice(0, 600)}`);
  const all = await everything(thread.thread_id);
  assert.match(all, /\[redacted\]/);
  assert.deepEqual(leaks(all), [], "thread, state, runs, history");
  assert.ok(lines.length > 0, "the failure was logged");
  assert.deepEqual(leaks(lines.join("\n")), [], "log lines");
});

test("a subagent's model error reaches the main model's context redacted", async () => {
  model.script(
    {
      when: "MARKER-MAIN",
      toolCalls: [{ name: "task", args: { subagent_type: "helper", description: "look it up" } }],
    },
    { when: "MARKER-HELPER", error: { status: 401, message: "Incorrect API key provided: {api_key}" } },
    {
      when: (r) => r.system.includes("MARKER-MAIN") && r.messages.some((m) => m.content.includes("Incorrect API key")),
      text: "the helper failed",
    },
  );
  const thread = await t.client.threads.create();
  const out = await (await fetch(`${t.url}/threads/${thread.thread_id}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } }),
  })).text();
  assert.deepEqual(leaks(out), []);
  const context = model.requests.filter((r) => r.system.includes("MARKER-MAIN")).flatMap((r) =>
    r.messages.map((m) => m.content)
  ).join("\n");
  assert.match(context, /Incorrect API key provided: \[redacted\]/, "the main model saw the subagent's error");
  assert.deepEqual(leaks(context), [], "model context");
  assert.deepEqual(leaks(await everything(thread.thread_id)), []);
  assert.deepEqual(leaks(lines.join("\n")), []);
});
