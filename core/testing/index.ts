/**
 * `agentcli/testing`: the conformance kits plugin authors run against their plugins with
 * `node:test` (Node, or `deno test`), the same suites the built-in plugins pass.
 * See `docs/plugins.md` for a complete example of each.
 */
export { identityProviderConformance } from "./identity-provider.ts";
export type { IdentityProviderEntry, ProviderHarness as IdentityProviderHarness } from "./identity-provider.ts";
export { modelProviderConformance } from "./model-provider.ts";
export type {
  ModelProviderEntry,
  ModelProviderHarness,
  ScriptedModelReply,
  SeenModelRequest,
} from "./model-provider.ts";
export { deployTargetConformance } from "./deploy-target.ts";
export type { DeployTargetEntry, DeployTargetHarness } from "./deploy-target.ts";
export { minimalConfig } from "./config.ts";
