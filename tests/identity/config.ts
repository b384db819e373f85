/** Shared pieces of the auth tests: a minimal normalized project config, and the HTTP status a call ends with. */
import type { AgentConfig } from "../../core/config/schema.ts";
import { AgentcliError } from "../../core/errors.ts";

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

/** 200 when the promise resolves, the status of the user error it rejects with otherwise. */
export async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof AgentcliError) return err.status;
    throw err;
  }
}
