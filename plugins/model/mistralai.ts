/** Model provider `mistralai:`: Mistral AI models. */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-mistralai",
  kind: "model",
  description: "Mistral AI models.",
  model: {
    prefix: "mistralai",
    env: ["MISTRAL_API_KEY"],
    integrationPackage: "@langchain/mistralai",
    defaultModel: "mistral-large-latest",
  },
});
