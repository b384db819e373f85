/** Model provider `anthropic:`: Anthropic Claude models. */
import { definePlugin } from "../../core/hooks.ts";

export default definePlugin({
  name: "model-anthropic",
  kind: "model",
  description: "Anthropic Claude models.",
  model: {
    prefix: "anthropic",
    env: ["ANTHROPIC_API_KEY"],
    integrationPackage: "@langchain/anthropic",
    defaultModel: "claude-sonnet-4-5",
  },
});
