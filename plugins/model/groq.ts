/** Model provider `groq:`: Groq-hosted open models. */
import { openAICompatiblePlugin } from "./openai-compatible.ts";
import { GROQ_PRICES } from "./prices.ts";

export default openAICompatiblePlugin({
  prefix: "groq",
  description: "Groq-hosted open models.",
  apiKeyVar: "GROQ_API_KEY",
  defaultModel: "llama-3.3-70b-versatile",
  prices: GROQ_PRICES,
  baseUrl: "https://api.groq.com/openai/v1",
});
