/**
 * The public face of core/kernel/: what the other layers, bin/ and plugins/ import from it.
 * Written by issue 32's step 1 from the imports of the day; later steps point those imports here.
 * Layer order (docs/architecture.md): kernel -> config, bundle, auth, storage -> harness, engine -> server, platform -> testing -> cli.
 */
export { concatBytes } from "./bytes.ts";
export { errorText } from "./error-text.ts";
export * from "./errors.ts";
export * from "./errors-data.ts";
export { idTaken, notFound } from "./request-errors.ts";
export * from "./hooks.ts";
export type {
  AgentConfig,
  LangGraphConfig,
  LangGraphExport,
  McpServerConfig,
  SkillInfo,
  SubagentConfig,
} from "./plugin-config.ts";
export { clientErrorReporter, consoleLog, redactingLog, silentLog } from "./log.ts";
export type { ServerLog } from "./log.ts";
export { PluginDriver } from "./plugin-driver.ts";
export { validatePlugins } from "./plugin-validate.ts";
export { loadPlugins } from "./plugins.ts";
export { redactProcessOutput } from "./redact-stdio.ts";
export { credentialEntry, literalCredentials, REGISTRY_FILES, variableReferences } from "./registry-files.ts";
export { redact, redactingStream, registerSecrets, secretValues } from "./redact.ts";
export * from "./runtime.ts";
export { isSandboxNotFound, SANDBOX_SKILLS_DIR } from "./sandbox-contract.ts";
export type { ExecuteResult, Sandbox, SandboxCreateOptions, SandboxScope } from "./sandbox-contract.ts";
export * from "./version.ts";
