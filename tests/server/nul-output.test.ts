/**
 * A NUL character (U+0000) in a model's output: PostgreSQL's jsonb (both engines: PGlite is
 * PostgreSQL) refuses `\u0000` in text, so the run's end, which writes the thread's state,
 * failed (the run ended `error`, RunNotRecorded). Now the run ends `success`; its output and
 * the checkpointed state keep the text exactly, the thread's record (jsonb) has U+FFFD (the
 * replacement character) for each NUL (core/storage/jsonb.ts); the thread is idle.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ChatOpenAI } from "@langchain/openai";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { startTestServer, type TestServer } from "./_harness.ts";
import { jsonbText } from "../../core/storage/jsonb.ts";

let models: ModelServer;
let t: TestServer;

before(async () => {
  models = await startModelServer();
  const model = new ChatOpenAI({
    model: "gpt-test",
    apiKey: "k",
    maxRetries: 0,
    configuration: { baseURL: models.openaiBaseUrl },
  });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("model", async (s) => ({ messages: [await model.invoke(s.messages)] }))
    .addEdge("__start__", "model")
    .compile();
  t = await startTestServer({ graphs: { nul: async () => graph } });
});

after(async () => {
  await t?.close();
  await models?.close();
});

test("a model's reply holding a NUL: the run ends success with its output, the thread idle (its record has U+FFFD)", async () => {
  const thread = await t.client.threads.create();
  models.script({ text: "before\u0000after" }, { text: "again\u0000" });
  const out = await t.client.runs.wait(thread.thread_id, "nul", {
    input: { messages: [{ role: "user", content: "hi" }] },
  }) as {
    messages: Array<{ content: string }>;
  };
  const [run] = await t.client.runs.list(thread.thread_id);
  assert.equal(run!.status, "success");
  // The run's output (its stream's last values) and the checkpointed state keep the text exactly.
  assert.equal(out.messages.at(-1)!.content, "before\u0000after");
  const state = await t.client.threads.getState(thread.thread_id);
  assert.equal(
    (state.values as { messages: Array<{ content: string }> }).messages.at(-1)!.content,
    "before\u0000after",
  );
  // The thread's record (jsonb) holds U+FFFD where the NUL was.
  const record = await t.client.threads.get(thread.thread_id);
  assert.equal(record.status, "idle");
  assert.equal(
    (record.values as { messages: Array<{ content: string }> }).messages.at(-1)!.content,
    "before\uFFFDafter",
  );

  // The thread goes on: a second turn on it ends too, with the whole history.
  const second = await t.client.runs.wait(thread.thread_id, "nul", {
    input: { messages: [{ role: "user", content: "more" }] },
  }) as { messages: Array<{ content: string }> };
  assert.equal(second.messages.length, 4);
  assert.equal((await t.client.threads.get(thread.thread_id)).status, "idle");
});

test("jsonbText replaces the NUL escapes only: the text `\\u0000` (a backslash, then u0000) stays", () => {
  assert.equal(jsonbText({ a: "x\u0000y", "k\u0000": 1 }), '{"a":"x\\ufffdy","k\\ufffd":1}');
  assert.equal(jsonbText({ a: "\\u0000" }), '{"a":"\\\\u0000"}');
  assert.equal(jsonbText({ a: "\\\u0000" }), '{"a":"\\\\\\ufffd"}');
  assert.equal(jsonbText({ a: "plain" }), '{"a":"plain"}');
});
