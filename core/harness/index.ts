/** The agent harness: the deep agent of a bundle, for `dev` and `serve`. */
export { type AgentGraph, type AgentGraphOptions, createAgentGraph } from "./graph.ts";
export { createChatModel, resolveModelSpec } from "./model.ts";
export { ALLOWED_DECISIONS } from "./approvals.ts";
export { storeIndexFromEnv } from "./embeddings.ts";
export { mcpPool } from "./mcp-pool.ts";
export { sandboxIdleSeconds, SandboxManager } from "./sandbox/manager.ts";
export { sandboxCredentialWarning, selectSandboxRuntime } from "./sandbox/runtime.ts";
export { sharedNamespace, subagentNamespace, userNamespace } from "./namespaces.ts";
