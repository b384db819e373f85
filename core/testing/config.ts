/** A normalized project configuration with every default applied, for conformance kits. */
import type { AgentConfig } from "../config/index.ts";

/** The smallest valid configuration (`[agent] name = "conformance"`), with `overrides`. */
export function minimalConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    agent: { name: "conformance", description: "", model: null },
    sandbox: { provider: "none", template: "agentcli-default", image: "python:3", scope: "thread" },
    auth: null,
    frontend: { enabled: false, app_name: "conformance", subtitle: "", prompts: [] },
    skills: [],
    user: { enabled: false },
    mcp: {},
    approvals: [],
    subagents: [],
    ...overrides,
  };
}
