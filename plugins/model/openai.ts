/** Model provider `openai:`: OpenAI chat models (also any OpenAI-compatible server via OPENAI_BASE_URL). */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-openai",
  kind: "model",
  description: "OpenAI chat models (also any OpenAI-compatible server via OPENAI_BASE_URL).",
  model: {
    prefix: "openai",
    env: ["OPENAI_API_KEY"],
    integrationPackage: "@langchain/openai",
    defaultModel: "gpt-5",
    createChatModel: async ({ model, env }) => {
      const { ChatOpenAI } = await import("@langchain/openai");
      return new ChatOpenAI({
        model,
        apiKey: env.OPENAI_API_KEY,
        useResponsesApi: false,
        configuration: env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : undefined,
      });
    },
  },
});
