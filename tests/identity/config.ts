/** A minimal normalized project config for auth tests. */
import type { AgentConfig } from "../../core/config/schema.ts";

export function testConfig(provider: string | null, overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    agent: { name: "auth-test", description: "", model: null },
    sandbox: { provider: "none", template: "agentcli-default", image: "python:3", scope: "thread" },
    auth: provider === null ? null : { provider },
    frontend: { enabled: false, app_name: "auth-test", subtitle: "", prompts: [] },
    skills: [],
    user: { enabled: false },
    mcp: {},
    approvals: [],
    subagents: [],
    ...overrides,
  };
}
