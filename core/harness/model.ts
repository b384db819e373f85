/**
 * Chooses and builds the chat model of a run through the model provider plugins.
 *
 * The model is resolved when the agent first calls it, not when the graph is built, so
 * `dev` and `serve` start without credentials and a missing credential is a clear run
 * error naming the variable. `[agent].model = null` picks the default from credentials in
 * the providers' `defaultRank` (spec 2.2).
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { createMiddleware } from "langchain";
import { type Env, type ModelProviderSpec, type PluginDriver, userError } from "../kernel/index.ts";
import { defaultChainVariables, defaultModel } from "../config/index.ts";

/** Finds the model provider plugin of a `provider:` prefix. */
export function modelProvider(driver: PluginDriver, prefix: string): ModelProviderSpec | null {
  return driver.spec("model", prefix) ?? null;
}

/** `[agent].model`, or the default chosen from credentials; throws naming every variable tried. */
export function resolveModelSpec(model: string | null, driver: PluginDriver, env: Env): string {
  if (model) return model;
  const chosen = defaultModel(driver, env);
  if (chosen) return chosen;
  const tried = defaultChainVariables(driver);
  throw userError("CREDENTIALS_MISSING", {
    message: `Cannot run the agent: no model is set and none of ${tried.join(", ")} is set`,
    hint: `Add one of ${tried.join(", ")} to .env, or set [agent].model = "provider:model" in agent.toml.`,
    status: 422,
  });
}

/** Builds the chat model of `provider:model`; a missing credential names its variable. */
export async function createChatModel(spec: string, driver: PluginDriver, env: Env): Promise<BaseChatModel> {
  const colon = spec.indexOf(":");
  const prefix = colon > 0 ? spec.slice(0, colon) : "";
  const model = spec.slice(colon + 1);
  const provider = modelProvider(driver, prefix);
  if (!provider || !provider.createChatModel) {
    throw userError("CONFIG_INVALID", {
      message: `Cannot run the agent: no model provider plugin handles "${prefix}" (model "${spec}")`,
      hint: `Use a model of a built-in provider, e.g. "openai:gpt-5", or load the provider's plugin with --plugin.`,
    });
  }
  const missing = provider.env.filter((v) => !env[v]);
  if (missing.length > 0) {
    throw userError("CREDENTIALS_MISSING", {
      message: `Cannot run the agent: ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set; add ${
        missing.length > 1 ? "them" : "it"
      } to .env`,
      hint: `The model "${spec}" needs ${provider.env.join(", ")}.`,
      status: 422,
    });
  }
  return (await provider.createChatModel({ model, env })) as BaseChatModel;
}

/**
 * A stand-in model for building the graph; the model-selection middleware replaces it on
 * every call, so it is never invoked.
 */
export class PendingChatModel extends BaseChatModel {
  _llmType(): string {
    return "agentcli-pending";
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    throw new Error("The agent's model was not resolved; the model-selection middleware must run first.");
  }
  override bindTools(): this {
    return this;
  }
}

/**
 * Middleware that swaps in the real model of an agent (the main agent or a subagent
 * with its own `model`), resolving and caching it on first use.
 */
export function modelSelectionMiddleware(opts: { model: string | null; driver: PluginDriver; env: Env }) {
  let resolved: Promise<BaseChatModel> | null = null;
  const load = () => {
    resolved ??=
      (async () => createChatModel(resolveModelSpec(opts.model, opts.driver, opts.env), opts.driver, opts.env))();
    resolved.catch(() => {
      resolved = null;
    });
    return resolved;
  };
  return createMiddleware({
    name: "AgentcliModelSelection",
    wrapModelCall: async (request, handler) => handler({ ...request, model: await load() }),
  });
}
