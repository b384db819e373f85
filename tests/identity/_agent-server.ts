/**
 * An agent server behind the real authenticator, on a free port, with SDK clients per caller.
 */
import { Client } from "@langchain/langgraph-sdk";
import type { Env } from "../../core/kernel/hooks.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { createAuthenticator } from "../../core/auth/index.ts";
import type { AgentServer, AgentServerOptions } from "../../core/server/app.ts";
import { startTestServer } from "../server/_harness.ts";
import identityA from "../../plugins/identity/identity_a.ts";
import identityB from "../../plugins/identity/identity_b.ts";
import anonymous from "../../plugins/identity/anonymous.ts";
import platformKey from "../../plugins/identity/platform_key.ts";
import { testConfig } from "./config.ts";

export interface AuthedServer {
  url: string;
  server: AgentServer;
  /** An SDK client sending these headers (no x-api-key unless given). */
  client(headers?: Record<string, string>, apiKey?: string | null): Client;
  close(): Promise<void>;
}

export const GRAPHS: AgentServerOptions["graphs"] = {
  echo: async () => (await import("../fixtures/graphs/echo.ts")).graph,
  slow: async () => (await import("../fixtures/graphs/slow.ts")).graph,
};

/** Starts an agent server whose requests go through `createAuthenticator` for `provider`. */
export async function startAuthedServer(
  opts: { provider: string | null; env: Env; mode?: "dev" | "serve"; extra?: Partial<AgentServerOptions> },
): Promise<AuthedServer> {
  const authenticate = createAuthenticator({
    driver: new PluginDriver([identityA, identityB, anonymous, platformKey]),
    config: testConfig(opts.provider),
    env: opts.env,
    mode: opts.mode ?? "serve",
  });
  const t = await startTestServer({ graphs: GRAPHS, authenticate, workers: 2, ...opts.extra });
  return {
    url: t.url,
    server: t.server,
    client: (headers = {}, apiKey = null) =>
      new Client({ apiUrl: t.url, apiKey, defaultHeaders: headers, callerOptions: { maxRetries: 0 } }),
    close: () => t.close(),
  };
}

export { statusOf } from "./config.ts";
