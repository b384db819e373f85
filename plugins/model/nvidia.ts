/** Model provider `nvidia:`: NVIDIA NIM endpoints (OpenAI-compatible API). */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-nvidia",
  kind: "model",
  description: "NVIDIA NIM endpoints (OpenAI-compatible API).",
  model: {
    prefix: "nvidia",
    env: ["NVIDIA_API_KEY"],
    integrationPackage: "@langchain/openai",
    defaultModel: "nvidia/llama-3.3-nemotron-super-49b-v1",
    createChatModel: async ({ model, env }) => {
      const { ChatOpenAI } = await import("@langchain/openai");
      return new ChatOpenAI({
        model,
        apiKey: env.NVIDIA_API_KEY,
        useResponsesApi: false,
        configuration: { baseURL: env.NVIDIA_BASE_URL || "https://integrate.api.nvidia.com/v1" },
      });
    },
  },
});
