/** Model provider `google_genai:`: Google Gemini models through the Gemini API key. */
import { definePlugin } from "../../core/index.ts";
import { GEMINI_PRICES } from "./prices.ts";

export default definePlugin({
  name: "model-google_genai",
  kind: "model",
  description: "Google Gemini models through the Gemini API key.",
  model: {
    prefix: "google_genai",
    env: ["GOOGLE_API_KEY"],
    integrationPackage: "@langchain/google-genai",
    defaultModel: "gemini-2.5-pro",
    prices: GEMINI_PRICES,
    defaultRank: 3,
    createChatModel: async ({ model, env }) => {
      const { ChatGoogleGenerativeAI } = await import("@langchain/google-genai");
      return new ChatGoogleGenerativeAI({
        model,
        apiKey: env.GOOGLE_API_KEY,
        ...(env.GOOGLE_GENAI_BASE_URL ? { baseUrl: env.GOOGLE_GENAI_BASE_URL } : {}),
      });
    },
  },
});
