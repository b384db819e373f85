/**
 * `close()` runs once, at shutdown: a `dev` reload (hostBundle's `reload`, what `agentcli dev`
 * does on save) keeps the MCP connections of an unchanged `mcp.json`, closes the ones a changed
 * `mcp.json` no longer uses, retries a server that was unreachable, and shutdown closes
 * everything. Counted at a real MCP server (SSE sessions), driven with the LangGraph SDK.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { loadProject } from "../../core/config/load.ts";
import { buildBundle, readBundle } from "../../core/bundle/bundle.ts";
import { type Host, hostBundle } from "../../core/server/host/agent-host.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type McpServers, startMcpServers } from "../fixtures/mcp-servers/server.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";

const driver = new PluginDriver(builtinPlugins);
let mcp: McpServers;
let model: ModelServer;
let dir: string;
let host: Host | null = null;

before(async () => {
  [mcp, model] = await Promise.all([startMcpServers(), startModelServer()]);
  dir = mkdtempSync(join(tmpdir(), "agentcli-mcp-reload-"));
  writeFileSync(join(dir, "agent.toml"), '[agent]\nname = "reloader"\nmodel = "openai:gpt-test"\n');
  writeFileSync(join(dir, ".env"), `OPENAI_API_KEY=k\nOPENAI_BASE_URL=${model.openaiBaseUrl}\n`);
});

after(async () => {
  await host?.close();
  await Promise.all([mcp?.close(), model?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The project as it is on disk now, built into a bundle (what dev's reload does on save). */
async function bundle(files: Record<string, string>) {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const loaded = await loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: false, cwd: dir });
  return { bundle: await readBundle((await buildBundle(loaded, { driver, version: "test" })).bytes), env: loaded.env };
}

/** One run that calls `send_email` (the SSE server's tool): the graph is built and uses its MCP tools. */
async function runOnce(client: Client, to: string): Promise<void> {
  model.script({ toolCalls: [{ name: "send_email", args: { to, body: "hi" } }] }, { text: "sent" });
  const thread = await client.threads.create();
  const state = await client.runs.wait(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "mail" }] },
  }) as { messages: Array<{ content: unknown }> };
  assert.equal(state.messages.at(-1)?.content, "sent");
  assert.equal(mcp.sent.at(-1)?.to, to, "the MCP tool was called");
}

const mailOnly = (url: string) => JSON.stringify({ mcpServers: { mail: { transport: "sse", url } } });

test("a reload keeps unchanged MCP connections, closes replaced ones, and shutdown closes the rest", async () => {
  const first = await bundle({ "AGENTS.md": "v1\n", "mcp.json": mailOnly(mcp.sseUrl) });
  host = await hostBundle({
    bundle: first.bundle,
    driver,
    env: first.env,
    mode: "dev",
    dataDir: join(dir, "data"),
    port: 0,
    host: "127.0.0.1",
    log: silentLog,
    sandboxDir: join(dir, "sandboxes"),
  });
  const client = new Client({ apiUrl: `http://127.0.0.1:${host.listening.port}`, callerOptions: { maxRetries: 0 } });

  await runOnce(client, "a@example.com");
  assert.deepEqual(mcp.sseSessions(), { opened: 1, open: 1 });

  // AGENTS.md changed, mcp.json did not: the new graph uses the same connection.
  const second = await bundle({ "AGENTS.md": "v2\n" });
  await host.reload(second.bundle, second.env);
  await runOnce(client, "b@example.com");
  await runOnce(client, "c@example.com");
  assert.deepEqual(mcp.sseSessions(), { opened: 1, open: 1 }, "no reconnect on a reload that leaves mcp.json alone");

  // mcp.json changed (the server's URL carries a query now): a new connection, the old one closed.
  const third = await bundle({ "mcp.json": mailOnly(`${mcp.sseUrl}?v=2`) });
  await host.reload(third.bundle, third.env);
  await runOnce(client, "d@example.com");
  const sessions = mcp.sseSessions();
  assert.equal(sessions.opened, 2);
  for (let i = 0; mcp.sseSessions().open !== 1 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(mcp.sseSessions().open, 1, "the replaced connection is closed");

  await host.close();
  host = null;
  for (let i = 0; mcp.sseSessions().open !== 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(mcp.sseSessions(), { opened: 2, open: 0 }, "shutdown closes it");
});

test("the pool keeps a fully connected tool set after its graph lets go, never one with an unreachable server", async () => {
  const { mcpPool } = await import("../../core/harness/mcp-pool.ts");
  const pool = mcpPool();
  const down = { down: { transport: "http" as const, url: "http://127.0.0.1:9/mcp" } };
  const partial = await pool.connect({ servers: down, env: {}, file: "mcp.json" });
  assert.equal(partial.unavailable.length, 1);
  await partial.close();
  assert.equal(pool.size, 0, "dropped: the next graph tries the server again");

  const before = mcp.sseSessions().opened;
  const up = { mail: { transport: "sse" as const, url: mcp.sseUrl } };
  const a = await pool.connect({ servers: up, env: {}, file: "mcp.json" });
  const b = await pool.connect({ servers: up, env: {}, file: "mcp.json" });
  assert.equal(mcp.sseSessions().opened, before + 1, "one connection for both holders");
  await a.close();
  await a.close();
  await b.close();
  assert.equal(pool.size, 1, "kept for the next graph");
  await pool.sweep();
  assert.equal(pool.size, 0, "swept once no graph holds it");
  await pool.close();
});
