/**
 * `usageOf` (core/engine/usage/usage-of.ts): a model call's token usage from what real chat
 * model clients return (OpenAI, Anthropic and Google against the scripted model server), and
 * from the provider shapes they keep in `response_metadata`, serialized messages and
 * generations; undefined when nothing says.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ChatAnthropic } from "@langchain/anthropic";
import { AIMessage, type AIMessageChunk } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { usageOf } from "../../core/engine/usage/usage-of.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";

let models: ModelServer;
before(async () => {
  models = await startModelServer();
});
after(async () => {
  await models?.close();
});

test("what the OpenAI and Anthropic clients return, streamed or not", async () => {
  const openai = new ChatOpenAI({ model: "gpt-test", apiKey: "k", configuration: { baseURL: models.openaiBaseUrl } });
  models.script({ text: "hi" }, { text: "streamed" });
  assert.deepEqual(usageOf(await openai.invoke("hello")), { input_tokens: 10, output_tokens: 5, total_tokens: 15 });
  let streamed: AIMessageChunk | undefined;
  for await (const chunk of await openai.stream("hello")) streamed = streamed ? streamed.concat(chunk) : chunk;
  assert.deepEqual(usageOf(streamed), { input_tokens: 10, output_tokens: 5, total_tokens: 15 });

  const anthropic = new ChatAnthropic({
    model: "claude-test",
    apiKey: "k",
    anthropicApiUrl: models.anthropicBaseUrl,
    maxRetries: 0,
  });
  models.script({ text: "hi" });
  const reply = await anthropic.invoke("hello");
  assert.equal(usageOf(reply)?.input_tokens, 10);
  assert.equal(usageOf(reply)?.output_tokens, 5);
  assert.equal(usageOf(reply)?.total_tokens, 15);
});

test("cached and reasoning tokens, from usage_metadata and from providers' raw usage", () => {
  const message = new AIMessage({
    content: "x",
    usage_metadata: {
      input_tokens: 100,
      output_tokens: 40,
      total_tokens: 140,
      input_token_details: { cache_read: 64 },
      output_token_details: { reasoning: 30 },
    },
  });
  const expected = {
    input_tokens: 100,
    output_tokens: 40,
    total_tokens: 140,
    cached_input_tokens: 64,
    reasoning_tokens: 30,
  };
  assert.deepEqual(usageOf(message), expected);
  assert.deepEqual(usageOf({ message }), expected, "a chat generation");
  assert.deepEqual(usageOf(JSON.parse(JSON.stringify(message))), expected, "serialized by LangChain");
  assert.deepEqual(
    usageOf({
      response_metadata: {
        usage: {
          prompt_tokens: 100,
          completion_tokens: 40,
          total_tokens: 140,
          prompt_tokens_details: { cached_tokens: 64 },
          completion_tokens_details: { reasoning_tokens: 30 },
        },
      },
    }),
    expected,
    "OpenAI's raw usage",
  );
  assert.deepEqual(
    usageOf({ response_metadata: { usage: { input_tokens: 36, cache_read_input_tokens: 64, output_tokens: 40 } } }),
    { input_tokens: 100, output_tokens: 40, total_tokens: 140, cached_input_tokens: 64 },
    "Anthropic's raw usage counts cache reads beside input_tokens",
  );
  assert.deepEqual(
    usageOf({ response_metadata: { tokenUsage: { promptTokens: 3, completionTokens: 2 } } }),
    { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
  );
  assert.equal(usageOf(new AIMessage("no usage")), undefined);
  assert.equal(usageOf(null), undefined);
  assert.equal(usageOf("text"), undefined);
});
