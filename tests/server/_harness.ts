/**
 * Shared setup of the server tests: an agent server on the fixture graphs, listening on a
 * free port, with an SDK client pointed at it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@langchain/langgraph-sdk";
import { type AgentServer, type AgentServerOptions, createAgentServer } from "../../core/server/app.ts";
import { listen, type Listening } from "../../core/server/host/node.ts";
import { consoleLog, silentLog } from "../../core/kernel/log.ts";
import { openSql } from "../../core/storage/sql.ts";

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

/**
 * Starts a server on a free port: in-memory PGlite unless `storage` is given, or, with
 * `AGENTCLI_TEST_SERVER_ON_POSTGRES=1`, PostgreSQL (`AGENTCLI_TEST_DATABASE_URL`) in a schema
 * of its own, so every server suite runs on both engines.
 */
export async function startTestServer(opts: Partial<AgentServerOptions> = {}): Promise<TestServer> {
  let dropSchema: (() => Promise<void>) | null = null;
  // Storage options that name no engine (e.g. only `encryption`) get the suite's engine too.
  const engineless = opts.storage && !("runs" in opts.storage) && !opts.storage.url && !opts.storage.dataDir;
  if ((!opts.storage || engineless) && process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1") {
    const base = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `agentcli_srv_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
    const admin = await openSql({ url: base });
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.close();
    opts = {
      ...opts,
      storage: {
        ...(opts.storage as object | undefined),
        url: `${base}${base.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      },
    };
    dropSchema = async () => {
      const a = await openSql({ url: base });
      await a.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await a.close();
    };
  }
  const server = await createAgentServer({
    graphs: FIXTURES,
    log: process.env.AGENTCLI_TEST_LOG ? consoleLog("test") : silentLog,
    ...opts,
  });
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
      await dropSchema?.();
    },
  };
}

/** Collects an SDK stream. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** A PostgreSQL schema of its own (`AGENTCLI_TEST_DATABASE_URL`) for servers sharing one database; `drop` removes it. */
export async function pgSchema(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = `${prefix}_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = await openSql({ url: base });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  return {
    url: `${base}${base.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async drop() {
      const a = await openSql({ url: base });
      await a.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await a.close();
    },
  };
}

/** Starts a server child process (`script` prints `PORT <n>` once listening) with an SDK client on it. */
export function spawnServer(script: string, args: string[]): Promise<{ proc: ChildProcess; client: Client }> {
  const proc = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) {
        resolve({
          proc,
          client: new Client({ apiUrl: `http://127.0.0.1:${m[1]}`, apiKey: null, callerOptions: { maxRetries: 0 } }),
        });
      }
    });
    proc.once("exit", (code) => reject(new Error(`server exited early (${code})`)));
  });
}

/** Sends `signal` to a child process and waits for it to exit (at once when it has). */
export function stopProcess(proc: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once("exit", () => resolve());
    proc.kill(signal);
  });
}

/** Polls `f` until it answers something truthy, and returns that (the suite's timeout bounds the wait). */
export async function until<T>(what: string, f: () => Promise<T | null | undefined | false>): Promise<T> {
  for (let i = 0;; i++) {
    const v = await f();
    if (v) return v;
    if (i > 3000) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
