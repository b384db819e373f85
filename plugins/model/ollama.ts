/** Model provider `ollama:`: Local models served by Ollama (OLLAMA_BASE_URL, default http://127.0.0.1:11434). */
import { definePlugin } from "../../core/index.ts";
import { OLLAMA_PRICES } from "./prices.ts";

export default definePlugin({
  name: "model-ollama",
  kind: "model",
  description: "Local models served by Ollama (OLLAMA_BASE_URL, default http://127.0.0.1:11434).",
  model: {
    prefix: "ollama",
    env: [],
    integrationPackage: "@langchain/openai",
    defaultModel: "llama3.2",
    prices: OLLAMA_PRICES,
    createChatModel: async ({ model, env }) => {
      const { ChatOpenAI } = await import("@langchain/openai");
      return new ChatOpenAI({
        model,
        apiKey: "ollama",
        useResponsesApi: false,
        configuration: { baseURL: openAICompatibleUrl(env.OLLAMA_BASE_URL || "http://127.0.0.1:11434") },
      });
    },
  },
});

/** Ollama serves its OpenAI-compatible API under `/v1` of its base URL. */
function openAICompatibleUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}
