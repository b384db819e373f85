/**
 * The compaction rules of an ended run's stream log (core/engine/broker/compact.ts), on event
 * lists as the executor publishes them: tool call chunks folded as LangChain concatenates
 * them, subgraph namespaces apart, the legacy `messages` mode, `debug`, `tasks` and `events`;
 * the events kept (the run's whole log, written as one batch), or null when nothing changes.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compactLog } from "../../core/engine/broker/compact.ts";
import type { RunEvent } from "../../core/storage/run-events.ts";

function log(...events: Array<[string, unknown]>): RunEvent[] {
  return events.map(([event, data], i) => ({ id: i + 1, event, data: JSON.stringify(data) }));
}

const chunk = (id: string, fields: Record<string, unknown>) => ({
  type: "ai",
  content: "",
  id,
  additional_kwargs: {},
  response_metadata: {},
  tool_calls: [],
  invalid_tool_calls: [],
  tool_call_chunks: [],
  name: null,
  ...fields,
});

describe("stream log compaction", () => {
  test("a streamed message with a tool call folds into one event at its last chunk's id", () => {
    const meta = { langgraph_node: "agent" };
    const events = log(
      ["metadata", { run_id: "r" }],
      ["values", { messages: [] }],
      ["messages", [chunk("m1", { content: "Let me " }), meta]],
      ["messages", [chunk("m1", { content: "look." }), { ...meta, late: true }]],
      ["messages", [chunk("m1", { tool_call_chunks: [{ index: 0, id: "c1", name: "search", args: '{"q":' }] }), meta]],
      ["messages", [chunk("m1", { tool_call_chunks: [{ index: 0, args: '"x"}' }] }), meta]],
      ["messages", [chunk("m1", { usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } }), meta]],
      ["messages|sub:1", [chunk("m2", { content: "a" }), meta]],
      ["messages|sub:1", [chunk("m2", { content: "b" }), meta]],
      ["messages", [{ type: "tool", content: "found", id: "t1", tool_call_id: "c1" }, meta]],
      ["updates", { agent: {} }],
      ["values", { messages: ["final"] }],
    );
    const write = compactLog(events)!;
    assert.deepEqual(write.map((e) => [e.id, e.event]), [
      [1, "metadata"],
      [7, "messages"],
      [9, "messages|sub:1"],
      [10, "messages"],
      [11, "updates"],
      [12, "values"],
    ]);
    const [m1, m1meta] = JSON.parse(write[1]!.data);
    assert.equal(m1.content, "Let me look.");
    assert.deepEqual(m1.tool_calls.map((c: { name: string; args: unknown; id: string }) => [c.name, c.args, c.id]), [
      ["search", { q: "x" }, "c1"],
    ]);
    assert.equal(m1.usage_metadata.total_tokens, 7);
    assert.deepEqual(m1meta, meta, "the first chunk's metadata");
    assert.equal(JSON.parse(write[2]!.data)[0].content, "ab");
    assert.equal(write[3]!.data, events[9]!.data, "a message that came whole stays as it is");
  });

  test("every event kept is in the compacted log, unchanged ones as they are; none changed: null", () => {
    const events = log(
      ["metadata", {}],
      ["values", { n: 1 }],
      ["custom", { tick: 1 }],
      ["values", { n: 2 }],
    );
    assert.deepEqual(compactLog(events), [events[0], events[2], events[3]]);
    assert.equal(compactLog(log(["metadata", {}], ["custom", { tick: 1 }], ["values", { n: 1 }])), null);
  });

  test("legacy messages mode, debug, tasks and events", () => {
    const m = (content: string) => [chunk("m", { content })];
    const events = log(
      ["messages/metadata", { m: { metadata: {} } }],
      ["messages/partial", m("a")],
      ["messages/partial", m("ab")],
      ["messages/partial|sub:1", [chunk("s", { content: "x" })]],
      ["debug", { type: "checkpoint", payload: { values: 1 } }],
      ["debug", { type: "task", payload: { id: "t1", input: { big: true } } }],
      ["debug", { type: "task_result", payload: { id: "t1", result: [] } }],
      ["debug", { type: "task", payload: { id: "t2", input: {} } }],
      ["debug", { type: "checkpoint", payload: { values: 2 } }],
      ["tasks", { id: "t1", name: "agent", input: { big: true }, triggers: [] }],
      ["tasks", { id: "t1", name: "agent", result: [], interrupts: [] }],
      ["events", { event: "on_chat_model_stream", run_id: "llm", data: { chunk: "a" } }],
      ["events", { event: "on_chat_model_end", run_id: "llm", data: { output: "a" } }],
      ["events", { event: "on_chat_model_stream", run_id: "cut", data: { chunk: "b" } }],
      ["messages/complete", m("ab")],
    );
    assert.deepEqual(compactLog(events)!.map((e) => e.id), [1, 4, 7, 8, 9, 11, 13, 14, 15]);
  });

  test("ids a resumed run skipped are not events", () => {
    const events: RunEvent[] = [
      { id: 1, event: "metadata", data: "{}" },
      { id: 2, event: "", data: "" },
      { id: 3, event: "values", data: "{}" },
      { id: 4, event: "values", data: "{}" },
    ];
    assert.deepEqual(compactLog(events)!.map((e) => e.id), [1, 4]);
  });
});
