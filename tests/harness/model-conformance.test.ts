/**
 * The model provider conformance kit (`agentcli/testing`) run against every built-in model
 * provider plugin, each against the local model server speaking its real wire protocol
 * (OpenAI chat completions, Anthropic messages, Gemini).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { createChatModel, resolveModelSpec } from "../../core/harness/index.ts";
import { modelProviderConformance } from "../../core/testing/model-provider.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";

const driver = new PluginDriver(builtinPlugins);

/** Each provider: its model and the env that points it at the local server. */
const PROVIDERS: Array<{ spec: string; env: (server: ModelServer) => Record<string, string> }> = [
  { spec: "openai:gpt-test", env: (s) => ({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: s.openaiBaseUrl }) },
  { spec: "anthropic:claude-test", env: (s) => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: s.anthropicBaseUrl }) },
  { spec: "google_genai:gemini-test", env: (s) => ({ GOOGLE_API_KEY: "k", GOOGLE_GENAI_BASE_URL: s.geminiBaseUrl }) },
  { spec: "nvidia:meta/llama-test", env: (s) => ({ NVIDIA_API_KEY: "k", NVIDIA_BASE_URL: s.openaiBaseUrl }) },
  {
    spec: "openrouter:openai/gpt-test",
    env: (s) => ({ OPENROUTER_API_KEY: "k", OPENROUTER_BASE_URL: s.openaiBaseUrl }),
  },
  { spec: "groq:llama-test", env: (s) => ({ GROQ_API_KEY: "k", GROQ_BASE_URL: s.openaiBaseUrl }) },
  { spec: "mistralai:mistral-test", env: (s) => ({ MISTRAL_API_KEY: "k", MISTRAL_BASE_URL: s.openaiBaseUrl }) },
  { spec: "ollama:llama-test", env: (s) => ({ OLLAMA_BASE_URL: `${s.url}/openai` }) },
  { spec: "azure_openai:my-deployment", env: (s) => ({ AZURE_OPENAI_API_KEY: "k", AZURE_OPENAI_ENDPOINT: s.url }) },
];

for (const p of PROVIDERS) {
  const prefix = p.spec.slice(0, p.spec.indexOf(":"));
  modelProviderConformance({
    plugin: builtinPlugins.find((b) => b.kind === "model" && b.model.prefix === prefix)!,
    model: p.spec,
    async start() {
      const server = await startModelServer();
      return {
        env: p.env(server),
        script: (...r) => server.script(...r),
        lastRequest: () => server.requests.at(-1),
        close: () => server.close(),
      };
    },
  });
}

describe("model provider google_vertexai", () => {
  test("builds a Vertex AI chat model from GOOGLE_CLOUD_PROJECT", async () => {
    const model = await createChatModel("google_vertexai:gemini-test", driver, { GOOGLE_CLOUD_PROJECT: "p" });
    assert.equal((model as object).constructor.name, "ChatVertexAI");
    assert.equal((model as { model?: string }).model, "gemini-test");
  });
  test("a missing credential is a clear error naming the variable", async () => {
    await assert.rejects(
      createChatModel("google_vertexai:gemini-test", driver, {}),
      /GOOGLE_CLOUD_PROJECT is not set; add it to \.env/,
    );
  });
});

describe("default model", () => {
  test("is chosen from credentials in the chain order", () => {
    assert.equal(
      resolveModelSpec(null, driver, { ANTHROPIC_API_KEY: "k", NVIDIA_API_KEY: "k" }),
      "anthropic:claude-sonnet-4-5",
    );
    assert.equal(resolveModelSpec(null, driver, { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k" }), "openai:gpt-5");
    assert.equal(resolveModelSpec("groq:x", driver, {}), "groq:x");
  });
  test("without credentials, the error names all five variables", () => {
    assert.throws(() => resolveModelSpec(null, driver, {}), (err: Error) => {
      for (
        const v of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "NVIDIA_API_KEY"]
      ) assert.ok(err.message.includes(v), v);
      return true;
    });
  });
});
