/** Model provider `azure_openai:`: Azure OpenAI deployments (the model is the deployment name). */
import { definePlugin } from "../../core/index.ts";
import { OPENAI_PRICES } from "./prices.ts";

export default definePlugin({
  name: "model-azure_openai",
  kind: "model",
  description: "Azure OpenAI deployments (the model is the deployment name).",
  model: {
    prefix: "azure_openai",
    env: ["AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"],
    integrationPackage: "@langchain/openai",
    defaultModel: "gpt-5",
    prices: OPENAI_PRICES,
    createChatModel: async ({ model, env }) => {
      const { AzureChatOpenAI } = await import("@langchain/openai");
      return new AzureChatOpenAI({
        model,
        azureOpenAIApiKey: env.AZURE_OPENAI_API_KEY,
        azureOpenAIEndpoint: env.AZURE_OPENAI_ENDPOINT,
        azureOpenAIApiDeploymentName: model,
        azureOpenAIApiVersion: env.AZURE_OPENAI_API_VERSION || env.OPENAI_API_VERSION || "2024-10-21",
        useResponsesApi: false,
      });
    },
  },
});
