/**
 * A model plugin for a provider that serves the OpenAI chat-completions wire protocol
 * (OpenAI itself, Groq, Mistral, NVIDIA NIM, OpenRouter): `ChatOpenAI` pointed at its base URL,
 * overridable with `<PREFIX>_BASE_URL` for proxies and local servers.
 */
import { definePlugin, type ModelPrice, type Plugin } from "../../core/index.ts";

export interface OpenAICompatibleProvider {
  prefix: string;
  description: string;
  /** The API key variable; the base URL override is the same name with `_BASE_URL` for `_API_KEY`. */
  apiKeyVar: string;
  defaultModel: string;
  defaultRank?: number;
  /** The provider's endpoint; absent means the OpenAI client's default. */
  baseUrl?: string;
  /** USD per million tokens by model name (the documented table of the plugin; `AGENTCLI_MODEL_PRICES` overrides). */
  prices?: Record<string, ModelPrice>;
}

export function openAICompatiblePlugin(p: OpenAICompatibleProvider): Plugin {
  const baseUrlVar = p.apiKeyVar.replace(/_API_KEY$/, "_BASE_URL");
  return definePlugin({
    name: `model-${p.prefix}`,
    kind: "model",
    description: p.description,
    model: {
      prefix: p.prefix,
      env: [p.apiKeyVar],
      integrationPackage: "@langchain/openai",
      defaultModel: p.defaultModel,
      ...(p.defaultRank ? { defaultRank: p.defaultRank } : {}),
      ...(p.prices ? { prices: p.prices } : {}),
      createChatModel: async ({ model, env }) => {
        const { ChatOpenAI } = await import("@langchain/openai");
        const baseURL = env[baseUrlVar] || p.baseUrl;
        return new ChatOpenAI({
          model,
          apiKey: env[p.apiKeyVar],
          useResponsesApi: false,
          configuration: baseURL ? { baseURL } : undefined,
        });
      },
      // The same wire's `/embeddings`, for the store's semantic search.
      createEmbeddings: async ({ model, env }) => {
        const { OpenAIEmbeddings } = await import("@langchain/openai");
        const baseURL = env[baseUrlVar] || p.baseUrl;
        return new OpenAIEmbeddings({
          model,
          apiKey: env[p.apiKeyVar],
          configuration: baseURL ? { baseURL } : undefined,
        });
      },
    },
  });
}
