/**
 * Shared setup of the server tests: an agent server on the fixture graphs, listening on a
 * free port, with an SDK client pointed at it.
 */
import { Client } from "@langchain/langgraph-sdk";
import { createAgentServer, type AgentServer, type AgentServerOptions } from "../../core/server/app.ts";
import { listen, type Listening } from "../../core/server/node.ts";
import { consoleLog, silentLog } from "../../core/server/log.ts";

export const FIXTURES: AgentServerOptions["graphs"] = {
  echo: async () => (await import("../fixtures/graphs/echo.ts")).graph,
  interrupt: async () => (await import("../fixtures/graphs/interrupt.ts")).graph,
  subgraph: async () => (await import("../fixtures/graphs/subgraph.ts")).graph,
  slow: async () => (await import("../fixtures/graphs/slow.ts")).graph,
};

export interface TestServer {
  server: AgentServer;
  url: string;
  client: Client;
  close(): Promise<void>;
}

/** Starts a server on a free port (in-memory PGlite unless `storage` is given). */
export async function startTestServer(opts: Partial<AgentServerOptions> = {}): Promise<TestServer> {
  const server = await createAgentServer({ graphs: FIXTURES, log: process.env.AGENTCLI_TEST_LOG ? consoleLog("test") : silentLog, ...opts });
  let listening: Listening;
  try {
    listening = await listen(server, { port: 0, host: "127.0.0.1" });
  } catch (err) {
    await server.close();
    throw err;
  }
  const url = `http://127.0.0.1:${listening.port}`;
  return {
    server,
    url,
    client: new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } }),
    async close() {
      await listening.close();
      await server.close({ graceMs: 200 });
    },
  };
}

/** Collects an SDK stream. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
