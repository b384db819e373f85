/**
 * How runs' traces are stored (issue 35): one `run_traces` row per run, written with the
 * run's end, each message of the run in it once (the spans name them by id); traces stored
 * before (a row per span in `run_spans` before migration 12, every message inline after it)
 * are still answered by `GET /threads/{id}/runs/{run_id}/trace` and swept after the retention.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { sqlOf } from "../../core/storage/storage.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { lookupAgent } from "./_lookup-agent.ts";
import { FIXTURES, startTestServer, until } from "./_harness.ts";

interface Answered {
  spans: {
    span_id: string;
    kind: string;
    name: string;
    duration_ms: number | null;
    input: unknown;
    output: unknown;
    usage?: unknown;
  }[];
}

type Message = { id: string; type: string; content: unknown };
const occurrences = (text: string, part: string) => text.split(part).length - 1;

test("one row per run; a trace stored a row per span before migration 12 is answered, then swept", async () => {
  const s = await startTestServer({ graphs: FIXTURES, ttl: { traceRetentionSeconds: 1 } });
  try {
    const sql = sqlOf(s.server.storage);
    const thread = await s.client.threads.create();
    await s.client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] } });
    const [run] = await s.client.runs.list(thread.thread_id);
    const url = `${s.url}/threads/${thread.thread_id}/runs/${run!.run_id}/trace`;
    const stored = await sql.query<{ spans: string }>("SELECT spans FROM run_traces WHERE run_id = $1", [run!.run_id]);
    assert.equal(stored.rows.length, 1, "the trace is one row");
    const now = (await (await fetch(url)).json()) as Answered;
    assert.equal(now.spans[0]!.kind, "run", "the run's span starts first");
    assert.equal(now.spans.length, (JSON.parse(stored.rows[0]!.spans) as { spans: unknown[] }).spans.length);

    // The same run's trace as the table before migration 12 held it, seq not in start order.
    await sql.query("DELETE FROM run_traces WHERE run_id = $1", [run!.run_id]);
    await sql.query(
      `INSERT INTO run_spans (run_id, seq, span_id, parent_id, kind, name, status, started_at, ended_at, data) VALUES
       ($1, 1, 'b', 'a', 'model', 'gpt-test', 'ok', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01.250Z', $2),
       ($1, 2, 'a', NULL, 'run', 'echo', 'ok', '2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z', '{"input":null,"output":null,"attributes":{}}')`,
      [
        run!.run_id,
        JSON.stringify({ input: ["hi"], output: "hello", usage: { input_tokens: 1 }, attributes: { m: 1 } }),
      ],
    );
    const legacy = (await (await fetch(url)).json()) as Answered;
    assert.deepEqual(legacy.spans.map((x) => [x.span_id, x.kind, x.duration_ms]), [["a", "run", 2000], [
      "b",
      "model",
      250,
    ]]);
    assert.deepEqual(legacy.spans[1]!.input, ["hi"]);
    assert.deepEqual(legacy.spans[1]!.usage, { input_tokens: 1 });

    // Both kinds are swept once older than the retention.
    await s.client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "again" }] } });
    await until("the traces swept", async () => {
      await new Promise((r) => setTimeout(r, 200));
      await s.server.sweepExpired();
      const left = await sql.query<{ n: number }>(
        "SELECT (SELECT count(*) FROM run_traces) + (SELECT count(*) FROM run_spans) AS n",
      );
      return Number(left.rows[0]!.n) === 0;
    });
    assert.deepEqual(((await (await fetch(url)).json()) as Answered).spans, []);
  } finally {
    await s.close();
  }
});

test("each message is stored once per run; the trace read back has every message in place", async () => {
  const models = await startModelServer();
  const agent = lookupAgent(models.openaiBaseUrl);
  const s = await startTestServer({ graphs: { agent: async () => agent } });
  try {
    models.script({ toolCalls: [{ name: "lookup", args: { q: "q1" } }] }, { text: "the answer" });
    const thread = await s.client.threads.create();
    await s.client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "question" }] },
    });
    const [run] = await s.client.runs.list(thread.thread_id);
    const row = await sqlOf(s.server.storage).query<{ spans: string }>(
      "SELECT spans FROM run_traces WHERE run_id = $1",
      [run!.run_id],
    );
    const text = row.rows[0]!.spans;
    // The question is the run's input, both model calls' input and the run's output: stored once.
    for (const part of ['"content":"question"', '"content":"result for q1"', '"content":"the answer"']) {
      assert.equal(occurrences(text, part), 1, `${part} once in ${text}`);
    }
    const state = (await s.client.threads.getState(thread.thread_id)).values as { messages: Message[] };
    const trace = (await (await fetch(`${s.url}/threads/${thread.thread_id}/runs/${run!.run_id}/trace`))
      .json()) as Answered;
    const models_ = trace.spans.filter((x) => x.kind === "model");
    assert.equal(models_.length, 2);
    const second = models_[1]!.input as Message[];
    assert.deepEqual(second.map((m) => [m.type, m.content]), [["human", "question"], ["ai", ""], [
      "tool",
      "result for q1",
    ]]);
    assert.deepEqual(second, state.messages.slice(0, 3), "the model's input is the thread's messages as they were");
    assert.deepEqual(models_[1]!.output as Message, state.messages[3]);
    const root = trace.spans.find((x) => x.kind === "run")!;
    assert.deepEqual((root.output as { messages: Message[] }).messages, state.messages, "the run's output");
    assert.deepEqual((root.input as { messages: Message[] }).messages.map((m) => m.content), ["question"]);
    const toolSpan = trace.spans.find((x) => x.kind === "tool")!;
    assert.equal((toolSpan.output as Message).content, "result for q1");
  } finally {
    await s.close();
    await models.close();
  }
});

test("a message a later node replaced (same id) is kept as each span saw it", async () => {
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("draft", () => ({ messages: [new AIMessage({ id: "reply", content: "first draft" })] }))
    .addNode("edit", () => ({ messages: [new AIMessage({ id: "reply", content: "edited" })] }))
    .addEdge("__start__", "draft")
    .addEdge("draft", "edit")
    .compile();
  const s = await startTestServer({ graphs: { drafts: async () => graph } });
  try {
    const thread = await s.client.threads.create();
    await s.client.runs.wait(thread.thread_id, "drafts", { input: { messages: [{ role: "user", content: "write" }] } });
    const [run] = await s.client.runs.list(thread.thread_id);
    const trace = (await (await fetch(`${s.url}/threads/${thread.thread_id}/runs/${run!.run_id}/trace`))
      .json()) as Answered;
    const drafted = trace.spans.find((x) => x.kind === "model" && (x.output as Message | null)?.id === "reply");
    assert.equal((drafted?.output as Message).content, "first draft", JSON.stringify(trace.spans));
    const root = trace.spans.find((x) => x.kind === "run")!;
    assert.deepEqual((root.output as { messages: Message[] }).messages.map((m) => m.content), ["write", "edited"]);
  } finally {
    await s.close();
  }
});

test("a trace stored with every message inline (before the messages were kept once) is answered", async () => {
  const s = await startTestServer({ graphs: FIXTURES });
  try {
    const sql = sqlOf(s.server.storage);
    const thread = await s.client.threads.create();
    await s.client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] } });
    const [run] = await s.client.runs.list(thread.thread_id);
    const inline = [{
      span_id: "a",
      parent_id: null,
      kind: "run",
      name: "echo",
      status: "ok",
      started_at: "2026-01-01T00:00:00.000Z",
      ended_at: "2026-01-01T00:00:01.000Z",
      data: { input: { messages: [{ type: "human", content: "hi" }] }, output: null, attributes: { n: 1 } },
    }];
    await sql.query("UPDATE run_traces SET spans = $2 WHERE run_id = $1", [run!.run_id, JSON.stringify(inline)]);
    const trace = (await (await fetch(`${s.url}/threads/${thread.thread_id}/runs/${run!.run_id}/trace`))
      .json()) as Answered;
    assert.deepEqual(trace.spans.map((x) => [x.span_id, x.duration_ms, x.input]), [[
      "a",
      1000,
      { messages: [{ type: "human", content: "hi" }] },
    ]]);
  } finally {
    await s.close();
  }
});
