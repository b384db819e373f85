/**
 * The messages-tuple events of a streaming model call (core/engine/executor/stream-modes.ts):
 * each token's event is `[message, metadata]` as the Agent API speaks it, redacted, with the
 * call's metadata serialized once for all its tokens.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AIMessageChunk } from "@langchain/core/messages";
import { registerSecrets, secretValues } from "../../core/kernel/redact.ts";
import { messageToWire, toWire } from "../../core/engine/executor/serialize.ts";
import { ChunkTranslator } from "../../core/engine/executor/stream-modes.ts";

const KEY = `sk-modes${crypto.randomUUID().replaceAll("-", "")}`;
registerSecrets(secretValues({ OPENAI_API_KEY: KEY }));

function tokens(metadata: Record<string, unknown>, contents: string[]) {
  const translator = new ChunkTranslator(["messages-tuple"]);
  const events: Array<{ event: string; data: unknown; redacted?: boolean }> = [];
  for (const content of contents) {
    translator.translate({
      ns: [],
      mode: "messages",
      payload: [new AIMessageChunk({ content, id: "chatcmpl-1" }), metadata],
      emit: (event, data, redacted) => events.push({ event, data, redacted }),
    });
  }
  return events;
}

test("each token is one messages event: the message and the call's metadata, as the Agent API's JSON", () => {
  const metadata = { graph_id: "g", langgraph_node: "respond", langgraph_path: ["__pregel_pull", "respond"], n: 1 };
  const events = tokens(metadata, [" a", " b"]);
  assert.deepEqual(events.map((e) => e.event), ["messages", "messages"]);
  for (const [i, content] of [" a", " b"].entries()) {
    const expected = [messageToWire(new AIMessageChunk({ content, id: "chatcmpl-1" })), toWire(metadata)];
    assert.equal(events[i]!.data, JSON.stringify(expected));
    assert.equal(events[i]!.redacted, true);
  }
});

test("a secret in a token or in the metadata is redacted in every event", () => {
  const events = tokens({ graph_id: "g", note: `key ${KEY}` }, [` leaked ${KEY}`, " fine"]);
  for (const e of events) {
    assert.ok(!(e.data as string).includes(KEY.slice(3, 19)), e.data as string);
    assert.match(e.data as string, /"note":"key \[redacted\]"/);
  }
  assert.match(events[0]!.data as string, /"content":" leaked \[redacted\]"/);
});
