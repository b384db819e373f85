/**
 * Usage read from a run's stream (core/engine/usage/stream-usage.ts), on `updates` chunks as
 * LangGraph streams them: each AI message once (by id), its provider as the plugin that built
 * the model names it (else its class's), its tokens counted from the text when none are
 * reported; other messages and interrupts are not calls.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ModelCall } from "../../core/engine/usage/recorder.ts";
import { StreamUsageReader } from "../../core/engine/usage/stream-usage.ts";

test("each AI message of an update is one call, named by its plugin, counted once", () => {
  const calls: ModelCall[] = [];
  const reader = new StreamUsageReader((c) => calls.push(c));
  const answer = new AIMessage({
    id: "m1",
    content: "hi",
    usage_metadata: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
    response_metadata: { model_name: "x/y-1", model_provider: "openai", agentcli_model_provider: "openrouter" },
  });
  reader.observe([], { model: { messages: [answer] } });
  reader.observe([], { tools: { messages: [new ToolMessage({ content: "r", tool_call_id: "t" })] } });
  reader.observe([], { other: { messages: [new HumanMessage("again"), answer] } });
  reader.observe([], { __interrupt__: [{ value: new AIMessage("not a call") }] });
  assert.deepEqual(calls, [{
    provider: "openrouter",
    model: "x/y-1",
    usage: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
    estimated: false,
  }]);
  reader.observe(["tools:1"], {
    model: new AIMessage({ id: "m2", content: "x".repeat(40), response_metadata: { model_provider: "google-genai" } }),
  });
  assert.equal(calls[1]!.provider, "google_genai");
  assert.equal(calls[1]!.model, "unknown");
  assert.deepEqual(calls[1]!.usage, { input_tokens: 0, output_tokens: 10, total_tokens: 10 });
  assert.equal(calls[1]!.estimated, true);
});
