/**
 * Run traces kept locally (issue 35 item 4): the deep agent (model server, an MCP tool, a
 * sandbox `execute` run by the local bubblewrap runtime, a subagent through `task`) served by
 * the agent server, driven by the SDK client; `GET /threads/{id}/runs/{run_id}/trace` answers
 * the run's spans (model calls with their usage, tool calls with their output and exit code,
 * the subagent's calls under its span), redacted, owner-scoped, live while the run goes, gone
 * after their retention, sealed at rest; a failed model call is the span's and the run's error.
 * The span rules every trace keeps, whichever way it is built, are in _trace-assertions.ts.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { definePlugin } from "../../core/kernel/hooks.ts";
import { MAX_FIELD_CHARS, MAX_RUN_CHARS, SpanRecorder } from "../../core/engine/tracing/span-recorder.ts";
import { encryptionFromEnv } from "../../core/storage/encryption.ts";
import { filesContaining, rowsContaining } from "../_plaintext.ts";
import { sqlOf } from "../../core/storage/storage.ts";
import local from "../../plugins/sandbox/local.ts";
import type { Harness } from "../harness/_harness.ts";
import { type McpServers, startMcpServers } from "../fixtures/mcp-servers/server.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { pgSchema, startTestServer, type TestServer } from "./_harness.ts";
import { assertDeepAgentTrace, deepAgentScript, fetchTrace, startDeepAgent } from "./_trace-assertions.ts";

const SECRET_SHAPED = "sk-live0123456789abcdefghijklmnop";
const root = mkdtempSync(join(tmpdir(), "agentcli-traces-"));
chmodSync(root, 0o711);
/** `my_box` sandboxes run by the local runtime, as `--sandbox local` runs a provider's. */
const myBoxSpec = definePlugin({
  name: "sandbox-my_box",
  kind: "sandbox",
  sandbox: {
    provider: "my_box",
    env: [],
    partnerPackage: null,
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: true, network: false, gpu: false },
  },
});
const localBoxes = definePlugin({
  name: "test-local-boxes",
  kind: "extension",
  hooks: {
    "sandbox:create": (opts) =>
      opts.provider !== "my_box" ? null : local.hooks["sandbox:create"]!({
        ...opts,
        provider: "sandbox_a",
        host: { stateDir: join(root, "sandboxes"), hiddenPaths: [] },
      }),
  },
});

let models: ModelServer;
let mcp: McpServers;
let h: Harness;
let t: TestServer;
let bob: Client;

before(async () => {
  models = await startModelServer();
  mcp = await startMcpServers();
  h = await startDeepAgent({
    models,
    mcp,
    config: { sandbox: { provider: "my_box", template: "agentcli-default", image: "python:3", scope: "thread" } },
    plugins: [myBoxSpec, localBoxes],
  });
  t = await startTestServer({
    graphs: { agent: async () => h.graph },
    authenticate: async (req) => ({ identity: req.headers.get("x-user") ?? "alice", isAuthenticated: true }),
  });
  bob = new Client({ apiUrl: t.url, apiKey: null, defaultHeaders: { "x-user": "bob" } });
});
after(async () => {
  await t?.close();
  await h?.dispose();
  await mcp?.close();
  await models?.close();
  rmSync(root, { recursive: true, force: true });
});

test("a run's trace: model calls with usage, an MCP tool, execute with its exit code, a subagent's nested calls", async () => {
  models.script(
    ...deepAgentScript({
      when: "MARKER-MAIN",
      toolCalls: [{ name: "execute", args: { command: `echo out-${SECRET_SHAPED}; exit 3` } }],
    }),
  );
  const thread = await t.client.threads.create();
  const run = await t.client.runs.create(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "why tides? MARKER-USER" }] },
  });
  await t.client.runs.join(thread.thread_id, run.run_id);
  assert.equal((await t.client.runs.get(thread.thread_id, run.run_id)).status, "success");
  assert.deepEqual(models.pending(), [], "every scripted reply was used");

  const { status, body } = await fetchTrace(t.url, { threadId: thread.thread_id, runId: run.run_id });
  assert.equal(status, 200);
  assert.equal(body.run_id, run.run_id);
  const { tool } = assertDeepAgentTrace(body.spans, { runId: run.run_id, userInput: /MARKER-USER/ });

  const execute = tool("execute");
  assert.equal(execute.attributes.exit_code, 3);
  assert.match(JSON.stringify(execute.output), /out-\[redacted\]/);
  assert.doesNotMatch(JSON.stringify(body), new RegExp(SECRET_SHAPED), "the secret-shaped output is redacted");

  // Owner-scoped like the run: another user, or an unknown run, gets 404.
  const foreign = await fetchTrace(t.url, { threadId: thread.thread_id, runId: run.run_id }, { "x-user": "bob" });
  assert.equal(foreign.status, 404);
  await assert.rejects(bob.runs.get(thread.thread_id, run.run_id), /404/);
  const unknown = await fetchTrace(t.url, { threadId: thread.thread_id, runId: crypto.randomUUID() });
  assert.equal(unknown.status, 404);
  assert.match(unknown.body.detail ?? "", /not found/i);
});

test("a failed model call is its span's error and the run's", async () => {
  models.script({ when: "MARKER-FAIL", error: { status: 400, message: "context window exceeded for gpt-test" } });
  const thread = await t.client.threads.create();
  const run = await t.client.runs.create(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "MARKER-FAIL" }] },
  });
  await t.client.runs.join(thread.thread_id, run.run_id);
  assert.equal((await t.client.runs.get(thread.thread_id, run.run_id)).status, "error");
  const { body } = await fetchTrace(t.url, { threadId: thread.thread_id, runId: run.run_id });
  const runSpan = body.spans.find((s) => s.kind === "run")!;
  assert.equal(runSpan.status, "error");
  assert.match(runSpan.error ?? "", /context window exceeded/);
  const model = body.spans.find((s) => s.kind === "model")!;
  assert.equal(model.status, "error");
  assert.match(model.error ?? "", /context window exceeded/);
  assert.equal(model.usage, undefined);
});

test("while a run is in flight, its trace shows the calls so far as running", async () => {
  let asked = false;
  models.script({
    when: (r) => (r.messages.some((m) => m.content.includes("MARKER-SLOW")) ? (asked = true) : false),
    text: "slow answer",
    delayMs: 5000,
  });
  const thread = await t.client.threads.create();
  const run = await t.client.runs.create(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: "MARKER-SLOW" }] },
  });
  while (!asked) await new Promise((r) => setTimeout(r, 20));
  const { body } = await fetchTrace(t.url, { threadId: thread.thread_id, runId: run.run_id });
  const runSpan = body.spans.find((s) => s.kind === "run")!;
  assert.equal(runSpan.status, "running");
  assert.equal(runSpan.ended_at, null);
  const model = body.spans.find((s) => s.kind === "model")!;
  assert.equal(model.status, "running");
  assert.equal(model.duration_ms, null);
  await t.client.runs.join(thread.thread_id, run.run_id);
  const done = await fetchTrace(t.url, { threadId: thread.thread_id, runId: run.run_id });
  assert.equal(done.body.spans.find((s) => s.kind === "model")!.status, "ok");
});

test("traces expire after AGENTCLI_TRACE_RETENTION_SECONDS; 0 records none", async () => {
  const { graph } = h;
  const short = await startTestServer({ graphs: { agent: async () => graph }, ttl: { traceRetentionSeconds: 1 } });
  const off = await startTestServer({ graphs: { agent: async () => graph }, ttl: { traceRetentionSeconds: 0 } });
  try {
    for (const s of [short, off]) {
      models.script({ when: "MARKER-RETAIN", text: "kept" });
      const thread = await s.client.threads.create();
      const run = await s.client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: "MARKER-RETAIN" }] },
        config: { configurable: { graph_auth_user_id: "carol" } },
      }) as unknown;
      assert.ok(run);
      const [latest] = await s.client.runs.list(thread.thread_id);
      const first = await fetchTrace(s.url, { threadId: thread.thread_id, runId: latest!.run_id });
      if (s === off) {
        assert.deepEqual(first.body.spans, [], "no trace is recorded with a retention of 0");
        continue;
      }
      assert.ok(first.body.spans.length > 1);
      // Swept once older than a second: poll the sweep until it is gone.
      let spans = first.body.spans;
      while (spans.length) {
        await new Promise((r) => setTimeout(r, 200));
        await s.server.sweepExpired();
        spans = (await fetchTrace(s.url, { threadId: thread.thread_id, runId: latest!.run_id })).body.spans;
      }
      assert.equal((await s.client.runs.get(thread.thread_id, latest!.run_id)).status, "success", "the run stays");
    }
  } finally {
    await short.close();
    await off.close();
  }
});

test("with encryption at rest, spans are nowhere in plaintext and read back in clear, after a restart too", async () => {
  const encryption = encryptionFromEnv({ LANGGRAPH_AES_KEY: "0123456789abcdef0123456789abcdef" });
  const { graph } = h;
  // A database that outlives the server (a schema of PostgreSQL, a data directory of the embedded one).
  const pg = process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1" ? await pgSchema("agentcli_traces_sealed") : null;
  const dataDir = join(root, "sealed-db");
  const storage = { ...(pg ? { url: pg.url } : { dataDir }), encryption };
  let s = await startTestServer({ graphs: { agent: async () => graph }, storage });
  try {
    models.script({ when: "MARKER-SEALED", text: "sealed answer" });
    const thread = await s.client.threads.create();
    await s.client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "MARKER-SEALED" }] },
      config: { configurable: { graph_auth_user_id: "carol" } },
    });
    const [run] = await s.client.runs.list(thread.thread_id);
    const ids = { threadId: thread.thread_id, runId: run!.run_id };
    const { body } = await fetchTrace(s.url, ids);
    assert.match(JSON.stringify(body.spans.find((x) => x.kind === "model")!.output), /sealed answer/);
    await s.close();
    s = await startTestServer({ graphs: { agent: async () => graph }, storage });
    const stored = (await fetchTrace(s.url, ids)).body.spans;
    assert.ok(stored.length > 1, "the spans were stored");
    assert.match(JSON.stringify(stored.find((x) => x.kind === "model")!.output), /sealed answer/);
    for (const needle of ["sealed answer", "MARKER-SEALED"]) {
      const found = pg ? await rowsContaining(sqlOf(s.server.storage), needle) : [];
      assert.deepEqual(found, [], `"${needle}" in plaintext in ${found.join(", ")}`);
    }
  } finally {
    await s.close();
    await pg?.drop();
  }
  if (!pg) {
    for (const needle of ["sealed answer", "MARKER-SEALED"]) {
      const found = filesContaining(dataDir, needle);
      assert.deepEqual(found, [], `"${needle}" in plaintext in ${found.join(", ")}`);
    }
  }
});

test("two replicas on one PostgreSQL: the executing one answers the live spans, either the stored ones", async () => {
  const pg = await pgSchema("agentcli_traces");
  const { graph } = h;
  const worker = await startTestServer({ graphs: { agent: async () => graph }, storage: { url: pg.url } });
  const api = await startTestServer({ graphs: { agent: async () => graph }, storage: { url: pg.url }, role: "api" });
  try {
    let asked = false;
    models.script({
      when: (r) => (r.messages.some((m) => m.content.includes("MARKER-REPLICA")) ? (asked = true) : false),
      text: "replica answer",
      delayMs: 3000,
    });
    const thread = await api.client.threads.create();
    const run = await api.client.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "MARKER-REPLICA" }] },
      config: { configurable: { graph_auth_user_id: "carol" } },
    });
    while (!asked) await new Promise((r) => setTimeout(r, 20));
    const live = await fetchTrace(worker.url, { threadId: thread.thread_id, runId: run.run_id });
    assert.equal(live.body.spans.find((s) => s.kind === "run")?.status, "running", "the executing replica");
    assert.deepEqual(
      (await fetchTrace(api.url, { threadId: thread.thread_id, runId: run.run_id })).body.spans,
      [],
      "the other one: at the end",
    );
    await api.client.runs.join(thread.thread_id, run.run_id);
    const stored = await fetchTrace(api.url, { threadId: thread.thread_id, runId: run.run_id });
    assert.equal(stored.body.spans.find((s) => s.kind === "run")?.status, "ok");
    assert.match(JSON.stringify(stored.body.spans.find((s) => s.kind === "model")?.output), /replica answer/);
  } finally {
    await api.close();
    await worker.close();
    await pg.drop();
  }
});

test("long inputs and outputs are cut; past the run's budget only their size is kept", () => {
  const recorder = new SpanRecorder({ run_id: "r", thread_id: "t", assistant_id: "a", graph_id: "g", attempt: 1 });
  const big = "x".repeat(MAX_FIELD_CHARS * 2);
  const calls = MAX_RUN_CHARS / MAX_FIELD_CHARS + 2;
  for (let i = 0; i < calls; i++) {
    recorder.handleToolStart({ lc: 1, type: "not_implemented", id: ["tool"] }, `{"i":${i}}`, `call-${i}`, "r");
    recorder.handleToolEnd(big, `call-${i}`);
  }
  const spans = recorder.stored({ status: "success" }).spans.map((s) => JSON.parse(s.data) as { output: unknown });
  assert.equal(spans.length, calls + 1);
  const first = spans[1]!.output as { truncated: boolean; chars: number; preview: string };
  assert.equal(first.truncated, true);
  assert.equal(first.chars, big.length + 2);
  assert.ok(first.preview === JSON.stringify(big).slice(0, MAX_FIELD_CHARS), "the first characters are kept");
  const last = spans.at(-1)!.output as Record<string, unknown>;
  assert.ok(last.truncated === true && last.chars === big.length + 2 && !("preview" in last), "only the size");
});

test("the trace endpoint is in /openapi.json", async () => {
  const doc = await (await fetch(`${t.url}/openapi.json`)).json() as { paths: Record<string, { get?: unknown }> };
  assert.ok(doc.paths["/threads/{thread_id}/runs/{run_id}/trace"]?.get);
});
