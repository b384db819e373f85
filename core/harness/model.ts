/**
 * Chooses and builds the chat model of a run through the model provider plugins.
 *
 * The model is resolved when the agent first calls it, not when the graph is built, so
 * `dev` and `serve` start without credentials and a missing credential is a clear run
 * error naming the variable. `[agent].model = null` picks the default from credentials in
 * the providers' `defaultRank` (spec 2.2).
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { createMiddleware } from "langchain";
import {
  agentcliError,
  type Env,
  ModelCredentialsMissing,
  ModelNotChosen,
  type ModelProviderSpec,
  ModelProviderUnknown,
  type PluginDriver,
} from "../kernel/index.ts";
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
  throw agentcliError(ModelNotChosen, { tried }, { status: 422 });
}

/** Builds the chat model of `provider:model`; a missing credential names its variable. */
export async function createChatModel(spec: string, driver: PluginDriver, env: Env): Promise<BaseChatModel> {
  const colon = spec.indexOf(":");
  const prefix = colon > 0 ? spec.slice(0, colon) : "";
  const model = spec.slice(colon + 1);
  const provider = modelProvider(driver, prefix);
  if (!provider || !provider.createChatModel) {
    throw agentcliError(ModelProviderUnknown, { prefix, model: spec });
  }
  const missing = provider.env.filter((v) => !env[v]);
  if (missing.length > 0) {
    throw agentcliError(ModelCredentialsMissing, { names: missing, model: spec, needs: provider.env }, {
      status: 422,
    });
  }
  const chat = (await provider.createChatModel({ model, env })) as BaseChatModel;
  // Usage records price the call by the plugin that built the model (core/engine/usage/recorder.ts).
  chat.metadata = { ...chat.metadata, agentcli_model_provider: prefix };
  return chat;
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
    throw new Error(
      "The agent's model was not resolved: the pending stand-in was called, so the model-selection middleware did not run first.",
    );
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
    wrapModelCall: async (request, handler) => {
      const model = await load();
      const response = await handler({ ...request, model });
      // The plugin that built the model names the call's provider in its message: usage read
      // from the run's stream prices it by that plugin (core/engine/usage/stream-usage.ts).
      const prefix = model.metadata?.agentcli_model_provider;
      if (AIMessage.isInstance(response) && typeof prefix === "string") {
        response.response_metadata = { ...response.response_metadata, agentcli_model_provider: prefix };
      }
      return response;
    },
  });
}
