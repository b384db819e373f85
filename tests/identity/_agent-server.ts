/**
 * An agent server behind the real authenticator, on a free port, with SDK clients per caller.
 */
import { Client } from "@langchain/langgraph-sdk";
import type { Env } from "../../core/hooks.ts";
import { PluginDriver } from "../../core/plugin-driver.ts";
import { createAuthenticator } from "../../core/auth/index.ts";
import { createAgentServer, type AgentServer, type AgentServerOptions } from "../../core/server/app.ts";
import { listen, type Listening } from "../../core/server/node.ts";
import { silentLog } from "../../core/server/log.ts";
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
export async function startAuthedServer(opts: { provider: string | null; env: Env; mode?: "dev" | "serve"; extra?: Partial<AgentServerOptions> }): Promise<AuthedServer> {
  const authenticate = createAuthenticator({
    driver: new PluginDriver([identityA, identityB, anonymous, platformKey]),
    config: testConfig(opts.provider),
    env: opts.env,
    mode: opts.mode ?? "serve",
  });
  const server = await createAgentServer({ graphs: GRAPHS, log: silentLog, authenticate, workers: 2, ...opts.extra });
  let listening: Listening;
  try {
    listening = await listen(server, { port: 0, host: "127.0.0.1" });
  } catch (err) {
    await server.close();
    throw err;
  }
  const url = `http://127.0.0.1:${listening.port}`;
  return {
    url,
    server,
    client: (headers = {}, apiKey = null) => new Client({ apiUrl: url, apiKey, defaultHeaders: headers, callerOptions: { maxRetries: 0 } }),
    async close() {
      await listening.close();
      await server.close({ graceMs: 200 });
    },
  };
}

/** Resolves to the HTTP status a call fails with (200 when it succeeds). */
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
