/** Model provider `openrouter:`: Any model on OpenRouter (OpenAI-compatible API). */
import { openAICompatiblePlugin } from "./openai-compatible.ts";

export default openAICompatiblePlugin({
  prefix: "openrouter",
  description: "Any model on OpenRouter (OpenAI-compatible API).",
  apiKeyVar: "OPENROUTER_API_KEY",
  defaultModel: "openai/gpt-5",
  baseUrl: "https://openrouter.ai/api/v1",
});
