/**
 * `agentcli/testing`, the entry plugin authors import: the conformance kits of core/testing/
 * plus the ones that host a whole agent server, which need agentcli's built-in plugins (the
 * OpenAI-wire model the suites script, the default identity and memory plugins). Like
 * bin/main.ts, this entry hands core the built-in list: core never imports plugins/.
 *
 * @example
 * // my-box.test.ts, run with: node --test my-box.test.ts
 * import { sandboxProviderConformance } from "agentcli/testing";
 * import plugin from "./my-box.ts";
 * sandboxProviderConformance({ plugin, env: { MY_BOX_KEY: process.env.MY_BOX_KEY! }, workdir: "/home/user" });
 */
import { agentcliError, ConformanceNoProvider, type Plugin } from "../core/index.ts";
import { sandboxConformance, type SandboxConformanceOptions } from "../core/testing/sandbox-conformance.ts";
import { builtinPlugins } from "../plugins/registry.ts";

export * from "../core/testing/index.ts";
export { startModelServer } from "../core/testing/model-server/server.ts";
export type { ModelServer, RecordedRequest, ScriptedReply } from "../core/testing/model-server/server.ts";
export type { SandboxConformanceOptions, ScriptedModelServer } from "../core/testing/sandbox-conformance.ts";

export interface SandboxProviderEntry extends Partial<Omit<SandboxConformanceOptions, "builtins" | "plugins">> {
  /** The sandbox plugin under test; absent for a built-in provider. */
  plugin?: Plugin;
}

/**
 * The sandbox provider suite (core/testing/sandbox-conformance.ts) against `plugin`: a real
 * agent server whose `[sandbox].provider` is the plugin's, driven with the LangGraph SDK and
 * a scripted model: execute and exit codes, the file tools on the same filesystem, binary
 * transfer, skills, per-thread and per-assistant scope, timeouts, isolation (no server
 * environment, no other sandbox, no network unless `network`), reattachment after a restart,
 * a sandbox gone at the provider, deletion with the thread.
 */
export function sandboxProviderConformance(entry: SandboxProviderEntry): void {
  const spec = entry.plugin?.kind === "sandbox" ? entry.plugin.sandbox : undefined;
  const provider = entry.provider ?? spec?.provider;
  if (!provider) {
    throw agentcliError(ConformanceNoProvider);
  }
  sandboxConformance({
    ...entry,
    name: entry.name ?? entry.plugin?.name ?? provider,
    provider,
    builtins: builtinPlugins,
    plugins: entry.plugin ? [entry.plugin] : [],
  });
}
