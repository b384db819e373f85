/** Model provider `openrouter:`: Any model on OpenRouter (OpenAI-compatible API). */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-openrouter",
  kind: "model",
  description: "Any model on OpenRouter (OpenAI-compatible API).",
  model: {
    prefix: "openrouter",
    env: ["OPENROUTER_API_KEY"],
    integrationPackage: "@langchain/openai",
    defaultModel: "openai/gpt-5",
    createChatModel: async ({ model, env }) => {
      const { ChatOpenAI } = await import("@langchain/openai");
      return new ChatOpenAI({
        model,
        apiKey: env.OPENROUTER_API_KEY,
        useResponsesApi: false,
        configuration: { baseURL: env.OPENROUTER_BASE_URL || "https://openrouter.ai/api/v1" },
      });
    },
  },
});
