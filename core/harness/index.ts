/** The agent harness: the deep agent of a bundle, for `dev` and `serve`. */
export { createAgentGraph, type AgentGraph, type AgentGraphOptions } from "./graph.ts";
export { resolveModelSpec, createChatModel } from "./model.ts";
export { ALLOWED_DECISIONS } from "./approvals.ts";
