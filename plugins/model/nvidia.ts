/** Model provider `nvidia:`: NVIDIA NIM endpoints (OpenAI-compatible API). */
import { openAICompatiblePlugin } from "./openai-compatible.ts";

export default openAICompatiblePlugin({
  prefix: "nvidia",
  description: "NVIDIA NIM endpoints (OpenAI-compatible API).",
  apiKeyVar: "NVIDIA_API_KEY",
  defaultModel: "nvidia/llama-3.3-nemotron-super-49b-v1",
  defaultRank: 5,
  baseUrl: "https://integrate.api.nvidia.com/v1",
});
