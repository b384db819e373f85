/** Model provider `openai:`: OpenAI chat models (also any OpenAI-compatible server via OPENAI_BASE_URL). */
import { openAICompatiblePlugin } from "./openai-compatible.ts";
import { OPENAI_PRICES } from "./prices.ts";

export default openAICompatiblePlugin({
  prefix: "openai",
  description: "OpenAI chat models (also any OpenAI-compatible server via OPENAI_BASE_URL).",
  apiKeyVar: "OPENAI_API_KEY",
  defaultModel: "gpt-5",
  defaultRank: 1,
  prices: OPENAI_PRICES,
});
