/** Model provider `mistralai:`: Mistral AI models. */
import { openAICompatiblePlugin } from "./openai-compatible.ts";

export default openAICompatiblePlugin({
  prefix: "mistralai",
  description: "Mistral AI models.",
  apiKeyVar: "MISTRAL_API_KEY",
  defaultModel: "mistral-large-latest",
  baseUrl: "https://api.mistral.ai/v1",
});
