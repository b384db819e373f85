/** Builds an in-memory {@link Bundle} for harness tests (what `readBundle` returns). */
import type { Bundle } from "../../core/bundle/types.ts";
import type { AgentConfig, SubagentConfig } from "../../core/config/schema.ts";
import { BUNDLE_FORMAT } from "../../core/bundle/types.ts";

export function makeConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    agent: { name: "research", description: "A research agent", model: "openai:gpt-test" },
    sandbox: { provider: "none", template: "agentcli-default", image: "python:3", scope: "thread" },
    auth: null,
    frontend: { enabled: false, app_name: "research", subtitle: "", prompts: [] },
    skills: [],
    user: { enabled: true },
    mcp: {},
    approvals: [],
    subagents: [],
    ...overrides,
  };
}

export function makeSubagent(s: Partial<SubagentConfig> & { name: string }): SubagentConfig {
  return { description: `The ${s.name} subagent`, model: null, skills: [], mcp: null, approvals: null, ...s };
}

export function makeBundle(config: AgentConfig, files: Record<string, string>): Bundle {
  const enc = new TextEncoder();
  return {
    manifest: {
      format: BUNDLE_FORMAT,
      agentcli: "0.0.0-test",
      name: config.agent.name,
      model: config.agent.model,
      requires: { plugins: [], packages: [] },
      secrets: [],
      files: [],
    },
    config,
    files: new Map(Object.entries(files).map(([k, v]) => [k, enc.encode(v)])),
  };
}

export const REVIEW_SKILL = `---
name: review
description: Review a draft for clarity and cite sources (MARKER-SKILL-REVIEW).
---
# Review
1. Read the draft.
2. List unclear claims.
`;

/** The identity the server injects for an authenticated user. */
export function userConfigurable(id: string): Record<string, unknown> {
  return { langgraph_auth_user: { identity: id, is_authenticated: true, permissions: [] }, graph_auth_user_id: id };
}
