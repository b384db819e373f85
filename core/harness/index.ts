/** The agent harness: the deep agent of a bundle, for `dev` and `serve`. */
export { type AgentGraph, type AgentGraphOptions, createAgentGraph } from "./graph.ts";
export { createChatModel, resolveModelSpec } from "./model.ts";
export { ALLOWED_DECISIONS } from "./approvals.ts";
