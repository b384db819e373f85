/** Model provider `anthropic:`: Anthropic Claude models. */
import { definePlugin } from "../../core/index.ts";
import { ANTHROPIC_PRICES } from "./prices.ts";

export default definePlugin({
  name: "model-anthropic",
  kind: "model",
  description: "Anthropic Claude models.",
  model: {
    prefix: "anthropic",
    env: ["ANTHROPIC_API_KEY"],
    integrationPackage: "@langchain/anthropic",
    defaultModel: "claude-sonnet-4-5",
    prices: ANTHROPIC_PRICES,
    defaultRank: 2,
    createChatModel: async ({ model, env }) => {
      const { ChatAnthropic } = await import("@langchain/anthropic");
      return new ChatAnthropic({
        model,
        apiKey: env.ANTHROPIC_API_KEY,
        ...(env.ANTHROPIC_BASE_URL ? { anthropicApiUrl: env.ANTHROPIC_BASE_URL } : {}),
      });
    },
  },
});
