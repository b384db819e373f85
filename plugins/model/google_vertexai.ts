/** Model provider `google_vertexai:`: Google Gemini models on Vertex AI (application default credentials). */
import { definePlugin } from "../../core/index.ts";
import { GEMINI_PRICES } from "./prices.ts";

export default definePlugin({
  name: "model-google_vertexai",
  kind: "model",
  description: "Google Gemini models on Vertex AI (application default credentials).",
  model: {
    prefix: "google_vertexai",
    env: ["GOOGLE_CLOUD_PROJECT"],
    unlessEnv: ["GOOGLE_API_KEY"],
    integrationPackage: "@langchain/google-vertexai",
    defaultModel: "gemini-2.5-pro",
    prices: GEMINI_PRICES,
    defaultRank: 4,
    createChatModel: async ({ model, env }) => {
      const { ChatVertexAI } = await import("@langchain/google-vertexai");
      return new ChatVertexAI({
        model,
        location: env.GOOGLE_CLOUD_LOCATION || "us-central1",
        authOptions: { projectId: env.GOOGLE_CLOUD_PROJECT },
        ...(env.GOOGLE_VERTEX_ENDPOINT ? { endpoint: env.GOOGLE_VERTEX_ENDPOINT } : {}),
      });
    },
  },
});
