/**
 * examples/langgraph-js's custom auth (src/auth.ts, an `Auth` of @langchain/langgraph-sdk/auth)
 * under `agentcli dev` with auth enforced: `authenticate` refuses an unknown token (401), each
 * user sees only the threads they created (the `threads` handler's filter and metadata), and a
 * user without "assistants:write" cannot create assistants (403), and LangGraph Studio's requests
 * (`x-auth-scheme: langsmith`) are its Studio user under dev. Served by lg-auth's
 * `HostOptions.langgraphAuth`, which this project's `auth.path` sets.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { loadProject } from "../../core/config/index.ts";
import { PluginDriver } from "../../core/kernel/index.ts";
import { type LangGraphDev, ROOT, startLangGraphDev } from "./_dev.ts";

let dev: LangGraphDev;
const as = (token: string | null) =>
  new Client({
    apiUrl: dev.url,
    apiKey: null,
    defaultHeaders: token ? { authorization: `Bearer ${token}` } : {},
    callerOptions: { maxRetries: 0 },
  });

before(async () => {
  dev = await startLangGraphDev(join(ROOT, "examples/langgraph-js"), { env: { AGENTCLI_DEV_AUTH_BYPASS: "0" } });
});
after(() => dev?.stop());

describe("examples/langgraph-js custom auth", () => {
  test("authenticate runs on every request: no or an unknown token is 401", async () => {
    await assert.rejects(as(null).threads.create(), /401/);
    await assert.rejects(as("token-eve").threads.create(), /401/);
  });

  test("the threads handler confines each user to the threads they created", async () => {
    const alice = await as("token-alice").threads.create();
    assert.equal(alice.metadata?.owner, "alice");
    const seenByBob = await as("token-bob").threads.search({ limit: 100 });
    assert.ok(!seenByBob.some((t) => t.thread_id === alice.thread_id));
    await assert.rejects(as("token-bob").threads.get(alice.thread_id), /404/);
  });

  test("under dev, LangGraph Studio's requests (x-auth-scheme: langsmith) are the Studio user, as under langgraph dev", async () => {
    const res = await fetch(`${dev.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-auth-scheme": "langsmith" },
      body: "{}",
    });
    assert.equal(res.status, 200);
  });

  test("scoped permissions: bob may use threads but not create assistants", async () => {
    await as("token-alice").assistants.create({ graphId: "chat", name: "alice's" });
    await assert.rejects(as("token-bob").assistants.create({ graphId: "chat", name: "bob's" }), /403/);
    const run = await as("token-bob").runs.wait(null, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    assert.ok(run);
  });
});

describe("auth.disable_studio_auth", () => {
  test("is read from langgraph.json (the host then keeps the Studio bypass off)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentcli-lg-studio-auth-"));
    try {
      writeFileSync(join(dir, "auth.ts"), "export const auth = {};\n");
      writeFileSync(join(dir, "graph.ts"), "export const graph = {};\n");
      const config = { graphs: { g: "./graph.ts:graph" }, auth: { path: "./auth.ts:auth", disable_studio_auth: true } };
      writeFileSync(join(dir, "langgraph.json"), JSON.stringify(config));
      const p = await loadProject(dir, { driver: new PluginDriver([]), env: {}, requireEnv: false, cwd: dir });
      assert.deepEqual(p.config.langgraph!.auth, { path: "auth.ts", exportName: "auth", disableStudioAuth: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
