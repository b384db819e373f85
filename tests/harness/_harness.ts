/** Starts a model server and builds the agent graph of a bundle over an in-memory store. */
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import type { Plugin } from "../../core/kernel/hooks.ts";
import type { AgentConfig } from "../../core/config/schema.ts";
import { type AgentGraph, createAgentGraph } from "../../core/harness/index.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { makeBundle } from "./_bundle.ts";

export interface Harness extends AgentGraph {
  server: ModelServer;
  store: BaseStore;
  /** Runs one turn; returns the final state. */
  run(
    text: string,
    configurable: Record<string, unknown>,
  ): Promise<{ messages: Array<{ content: unknown; getType(): string; status?: string; name?: string }> }>;
  /** Closes graph and model server. */
  dispose(): Promise<void>;
}

export async function startHarness(opts: {
  config: AgentConfig;
  files: Record<string, string>;
  env?: Record<string, string>;
  store?: BaseStore;
  server?: ModelServer;
  plugins?: Plugin[];
}): Promise<Harness> {
  const server = opts.server ?? (await startModelServer());
  const store = opts.store ?? new InMemoryStore();
  const built = await createAgentGraph({
    bundle: makeBundle(opts.config, opts.files),
    driver: new PluginDriver([...builtinPlugins, ...(opts.plugins ?? [])]),
    env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.openaiBaseUrl, ...opts.env },
    checkpointer: new MemorySaver(),
    store,
  });
  return {
    ...built,
    server,
    store,
    run: (text, configurable) =>
      built.graph.invoke({ messages: [{ role: "user", content: text }] }, { configurable }) as never,
    dispose: async () => {
      await built.close();
      if (!opts.server) await server.close();
    },
  };
}

/** The text of a store file value. */
export function contentOf(item: { value: Record<string, unknown> } | null): string | null {
  const c = item?.value.content;
  return typeof c === "string" ? c : Array.isArray(c) ? c.join("\n") : null;
}
