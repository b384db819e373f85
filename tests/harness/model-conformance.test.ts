/**
 * One conformance suite run against every model provider plugin: streaming text, a tool
 * call round trip, and a missing credential, against the local model server speaking each
 * provider's real wire protocol (OpenAI chat completions, Anthropic messages, Gemini).
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { PluginDriver } from "../../core/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { createChatModel, resolveModelSpec } from "../../core/harness/index.ts";
import { startModelServer, type ModelServer } from "../fixtures/model-server/server.ts";

const driver = new PluginDriver(builtinPlugins);
let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

/** Each provider: its model, the env that points it at the local server, and its credential variables. */
const PROVIDERS: Array<{ spec: string; env: () => Record<string, string>; credentials: string[] }> = [
  { spec: "openai:gpt-test", env: () => ({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.openaiBaseUrl }), credentials: ["OPENAI_API_KEY"] },
  { spec: "anthropic:claude-test", env: () => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.anthropicBaseUrl }), credentials: ["ANTHROPIC_API_KEY"] },
  { spec: "google_genai:gemini-test", env: () => ({ GOOGLE_API_KEY: "k", GOOGLE_GENAI_BASE_URL: server.geminiBaseUrl }), credentials: ["GOOGLE_API_KEY"] },
  { spec: "nvidia:meta/llama-test", env: () => ({ NVIDIA_API_KEY: "k", NVIDIA_BASE_URL: server.openaiBaseUrl }), credentials: ["NVIDIA_API_KEY"] },
  { spec: "openrouter:openai/gpt-test", env: () => ({ OPENROUTER_API_KEY: "k", OPENROUTER_BASE_URL: server.openaiBaseUrl }), credentials: ["OPENROUTER_API_KEY"] },
  { spec: "groq:llama-test", env: () => ({ GROQ_API_KEY: "k", GROQ_BASE_URL: server.openaiBaseUrl }), credentials: ["GROQ_API_KEY"] },
  { spec: "mistralai:mistral-test", env: () => ({ MISTRAL_API_KEY: "k", MISTRAL_BASE_URL: server.openaiBaseUrl }), credentials: ["MISTRAL_API_KEY"] },
  { spec: "ollama:llama-test", env: () => ({ OLLAMA_BASE_URL: `${server.url}/openai` }), credentials: [] },
  { spec: "azure_openai:my-deployment", env: () => ({ AZURE_OPENAI_API_KEY: "k", AZURE_OPENAI_ENDPOINT: server.url }), credentials: ["AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"] },
];

const weatherTool = {
  type: "function" as const,
  function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

for (const p of PROVIDERS) {
  describe(`model provider ${p.spec.split(":")[0]}`, () => {
    test("streams text token by token", async () => {
      server.script({ text: "The quick brown fox jumps." });
      const model = await createChatModel(p.spec, driver, p.env());
      const parts: string[] = [];
      for await (const chunk of await model.stream([new HumanMessage("say something")])) {
        if (typeof chunk.content === "string" && chunk.content) parts.push(chunk.content);
      }
      assert.equal(parts.join(""), "The quick brown fox jumps.");
      assert.ok(parts.length > 1, `expected several chunks, got ${parts.length}`);
      const req = server.requests.at(-1)!;
      assert.equal(req.stream, true);
      assert.equal(req.messages.at(-1)!.content, "say something");
    });

    test("calls a tool and uses its result", async () => {
      server.script({ toolCalls: [{ name: "get_weather", args: { city: "Lyon" } }] }, { text: "It is sunny in Lyon." });
      const model = (await createChatModel(p.spec, driver, p.env())) as BaseChatModel;
      const bound = model.bindTools!([weatherTool]);
      const question = new HumanMessage("weather in Lyon?");
      const first = (await bound.invoke([question])) as AIMessage;
      assert.equal(first.tool_calls?.length, 1);
      assert.equal(first.tool_calls![0].name, "get_weather");
      assert.deepEqual(first.tool_calls![0].args, { city: "Lyon" });
      assert.deepEqual(server.requests.at(-1)!.tools, ["get_weather"]);
      const result = new ToolMessage({ content: "sunny, 24C", tool_call_id: first.tool_calls![0].id ?? "", name: "get_weather" });
      const second = (await bound.invoke([question, first, result])) as AIMessage;
      assert.equal(second.content, "It is sunny in Lyon.");
      const seen = server.requests.at(-1)!;
      assert.equal(seen.messages.find((m) => m.toolCalls)?.toolCalls?.[0].name, "get_weather");
      assert.match(seen.messages.find((m) => m.role === "tool")!.content, /sunny, 24C/);
    });

    if (p.credentials.length > 0) {
      test("a missing credential is a clear error naming the variable", async () => {
        const env = p.env();
        delete env[p.credentials[0]];
        await assert.rejects(createChatModel(p.spec, driver, env), (err: Error) => {
          assert.match(err.message, new RegExp(`^Cannot run the agent: ${p.credentials[0]} is not set; add it to \\.env$`));
          return true;
        });
      });
    }
  });
}

describe("model provider google_vertexai", () => {
  test("builds a Vertex AI chat model from GOOGLE_CLOUD_PROJECT", async () => {
    const model = await createChatModel("google_vertexai:gemini-test", driver, { GOOGLE_CLOUD_PROJECT: "p" });
    assert.equal((model as object).constructor.name, "ChatVertexAI");
    assert.equal((model as { model?: string }).model, "gemini-test");
  });
  test("a missing credential is a clear error naming the variable", async () => {
    await assert.rejects(createChatModel("google_vertexai:gemini-test", driver, {}), /GOOGLE_CLOUD_PROJECT is not set; add it to \.env/);
  });
});

describe("default model", () => {
  test("is chosen from credentials in the chain order", () => {
    assert.equal(resolveModelSpec(null, driver, { ANTHROPIC_API_KEY: "k", NVIDIA_API_KEY: "k" }), "anthropic:claude-sonnet-4-5");
    assert.equal(resolveModelSpec(null, driver, { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k" }), "openai:gpt-5");
    assert.equal(resolveModelSpec("groq:x", driver, {}), "groq:x");
  });
  test("without credentials, the error names all five variables", () => {
    assert.throws(() => resolveModelSpec(null, driver, {}), (err: Error) => {
      for (const v of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "NVIDIA_API_KEY"]) assert.ok(err.message.includes(v), v);
      return true;
    });
  });
});
