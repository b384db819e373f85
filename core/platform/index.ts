/**
 * The public face of core/platform/: what the other layers, bin/ and plugins/ import from it.
 * Written by issue 32's step 1 from the imports of the day; later steps point those imports here.
 * Layer order (docs/architecture.md): kernel -> config, bundle, auth, storage -> harness, engine -> server, platform -> testing -> cli.
 */
export { RESEARCH_TEMPLATE } from "./reconciler/templates.ts";
export type { AgentTemplate } from "./reconciler/templates.ts";
export { platformLimits } from "./api/limits.ts";
export { openPlatform } from "./server.ts";
export { DEFAULT_PLATFORM_URL, type PlatformClient, platformClient } from "./client.ts";
export { PLATFORM_MIGRATIONS } from "./store/migrations.ts";
export {
  createApiKey,
  createIntegration,
  createListener,
  createTenant,
  createToken,
  findTenant,
  listTenants,
  revokeApiKey,
  setListenerKubeconfig,
} from "./store/tenancy.ts";
export * from "./evals/index.ts";
