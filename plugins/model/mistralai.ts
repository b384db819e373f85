/** Model provider `mistralai:`: Mistral AI models. */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-mistralai",
  kind: "model",
  description: "Mistral AI models.",
  model: {
    prefix: "mistralai",
    env: ["MISTRAL_API_KEY"],
    integrationPackage: "@langchain/openai",
    defaultModel: "mistral-large-latest",
    createChatModel: async ({ model, env }) => {
      const { ChatOpenAI } = await import("@langchain/openai");
      return new ChatOpenAI({
        model,
        apiKey: env.MISTRAL_API_KEY,
        useResponsesApi: false,
        configuration: { baseURL: env.MISTRAL_BASE_URL || "https://api.mistral.ai/v1" },
      });
    },
  },
});
