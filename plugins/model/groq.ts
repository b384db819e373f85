/** Model provider `groq:`: Groq-hosted open models. */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-groq",
  kind: "model",
  description: "Groq-hosted open models.",
  model: {
    prefix: "groq",
    env: ["GROQ_API_KEY"],
    integrationPackage: "@langchain/openai",
    defaultModel: "llama-3.3-70b-versatile",
    createChatModel: async ({ model, env }) => {
      const { ChatOpenAI } = await import("@langchain/openai");
      return new ChatOpenAI({
        model,
        apiKey: env.GROQ_API_KEY,
        useResponsesApi: false,
        configuration: { baseURL: env.GROQ_BASE_URL || "https://api.groq.com/openai/v1" },
      });
    },
  },
});
