/** Model provider `google_vertexai:`: Google Gemini models on Vertex AI (application default credentials). */
import { definePlugin } from "../../core/hooks.ts";

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
  },
});
