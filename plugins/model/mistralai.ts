/** Model provider `mistralai:`: Mistral AI models. */
import { openAICompatiblePlugin } from "./openai-compatible.ts";
import { MISTRAL_PRICES } from "./prices.ts";

export default openAICompatiblePlugin({
  prefix: "mistralai",
  description: "Mistral AI models.",
  apiKeyVar: "MISTRAL_API_KEY",
  defaultModel: "mistral-large-latest",
  prices: MISTRAL_PRICES,
  baseUrl: "https://api.mistral.ai/v1",
});
