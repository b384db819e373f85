/**
 * The public face of core/config/: what the other layers, bin/ and plugins/ import from it.
 * Written by issue 32's step 1 from the imports of the day; later steps point those imports here.
 * Layer order (docs/architecture.md): kernel -> config, bundle, auth, storage -> harness, engine -> server, platform -> testing -> cli.
 */
export { defaultChainVariables, defaultModel, describeMissing, missingSandboxEnv } from "./credentials.ts";
export type { MissingEnv } from "./credentials.ts";
export { countSetting, secondsSetting, switchSetting } from "./env-settings.ts";
export { loadProject } from "./load.ts";
export type { LoadedProject } from "./load.ts";
export { expandEnv } from "./mcp.ts";
export { DEFAULT_FRONTEND_PROMPTS, DEFAULT_FRONTEND_SUBTITLE } from "./schema.ts";
export type { AgentConfig, McpServerConfig } from "./schema.ts";
export { agentTomlJsonSchema } from "./json-schema.ts";
