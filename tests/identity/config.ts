/** Shared pieces of the auth tests: a minimal normalized project config, and the HTTP status a call ends with. */
import type { AgentConfig } from "../../core/config/schema.ts";
import { minimalConfig } from "../../core/testing/config.ts";

export function testConfig(provider: string | null, overrides: Partial<AgentConfig> = {}): AgentConfig {
  return minimalConfig({
    agent: { name: "auth-test", description: "", model: null },
    auth: provider === null ? null : { provider },
    frontend: { enabled: false, app_name: "auth-test", subtitle: "", prompts: [] },
    ...overrides,
  });
}

/** The HTTP status a call fails with (a user error's, or an SDK error's), 200 when it succeeds; streams are drained. */
export async function statusOf(p: Promise<unknown> | AsyncIterable<unknown>): Promise<number> {
  try {
    if (Symbol.asyncIterator in (p as object)) {
      for await (const _ of p as AsyncIterable<unknown>) { /* drain */ }
    } else {
      await p;
    }
    return 200;
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (typeof status === "number") return status;
    throw err;
  }
}
