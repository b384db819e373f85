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
  },
});
