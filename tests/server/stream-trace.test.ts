/**
 * The local trace two ways (issue 35 item 5): a run without a callback handler anyway (the
 * `values` stream mode) has its trace built from its `tasks` stream (core/engine/tracing/
 * stream-trace.ts); one with a handler anyway (`messages-tuple`) has it from the trace
 * recorder's handler (span-recorder.ts). Both show model calls with their usage, an MCP tool
 * call, a failing tool call, and a subagent's model call nested under its `task` call; the
 * run's usage counts every call once (the subagent's too). The deep agent (model server, MCP
 * tools, a subagent) served by the agent server, driven by the SDK client.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { makeConfig, makeSubagent } from "../harness/_bundle.ts";
import { type Harness, startHarness } from "../harness/_harness.ts";
import { type McpServers, startMcpServers } from "../fixtures/mcp-servers/server.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

interface Span {
  span_id: string;
  parent_id: string | null;
  kind: string;
  name: string;
  status: string;
  input: unknown;
  output: unknown;
  error?: string;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
  attributes: Record<string, unknown>;
}

let models: ModelServer;
let mcp: McpServers;
let h: Harness;
let t: TestServer;

before(async () => {
  models = await startModelServer();
  mcp = await startMcpServers();
  h = await startHarness({
    config: makeConfig({
      mcp: { facts: { transport: "http", url: mcp.httpUrl, headers: { "x-api-key": "k" }, timeout: 20 } },
      subagents: [makeSubagent({ name: "critic", description: "Critiques drafts" })],
    }),
    files: {
      "AGENTS.md": "Main agent. MARKER-MAIN",
      "subagents/critic/AGENTS.md": "You are the critic. MARKER-CRITIC",
    },
    server: models,
  });
  t = await startTestServer({ graphs: { agent: async () => h.graph } });
});
after(async () => {
  await t?.close();
  await h?.dispose();
  await mcp?.close();
  await models?.close();
});

for (const mode of ["values", "messages-tuple"] as const) {
  const way = mode === "values" ? "built from the run's stream" : "built by the callback handler";
  test(`${mode}: the trace ${way} has model and tool calls, a failed tool, a subagent's nested call`, async () => {
    models.script(
      { when: "MARKER-MAIN", toolCalls: [{ name: "lookup_fact", args: { topic: "tides" } }] },
      { when: "MARKER-MAIN", toolCalls: [{ name: "broken_fact", args: { topic: "waves" } }] },
      {
        when: "MARKER-MAIN",
        toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Critique the tides draft" } }],
      },
      { when: "MARKER-CRITIC", text: "CRITIQUE: premise two is weak" },
      { when: "MARKER-MAIN", text: "All done." },
    );
    const thread = await t.client.threads.create();
    let runId = "";
    for await (
      const part of t.client.runs.stream(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: `why tides? ${mode}` }] },
        streamMode: [mode],
      })
    ) {
      if (part.event === "metadata") runId = (part.data as { run_id: string }).run_id;
    }
    const run = await t.client.runs.get(thread.thread_id, runId) as unknown as {
      status: string;
      usage: { calls: number; input_tokens: number; output_tokens: number } | null;
    };
    assert.equal(run.status, "success");
    assert.deepEqual(
      [run.usage?.calls, run.usage?.input_tokens, run.usage?.output_tokens],
      [5, 50, 25],
      "every call counted once, the subagent's too",
    );
    const res = await fetch(`${t.url}/threads/${thread.thread_id}/runs/${runId}/trace`);
    assert.equal(res.status, 200);
    const spans = (await res.json() as { spans: Span[] }).spans;
    const byId = new Map(spans.map((s) => [s.span_id, s]));
    const ancestors = (s: Span) => {
      const out: Span[] = [];
      for (let p = byId.get(s.parent_id ?? ""); p; p = byId.get(p.parent_id ?? "")) out.push(p);
      return out;
    };
    const runSpan = spans.find((s) => s.kind === "run")!;
    assert.equal(runSpan.span_id, runId);
    assert.equal(runSpan.attributes.trace_from, mode === "values" ? "stream" : "callbacks");
    assert.match(JSON.stringify(runSpan.output), /All done\./);
    for (const s of spans) {
      assert.notEqual(s.status, "running");
      if (s !== runSpan) assert.ok(ancestors(s).includes(runSpan), `${s.kind} ${s.name} is under the run`);
    }

    const modelSpans = spans.filter((s) => s.kind === "model");
    assert.equal(modelSpans.length, 5, "four calls of the main agent's model and one of the subagent's");
    for (const m of modelSpans) {
      assert.deepEqual(m.usage, { input_tokens: 10, output_tokens: 5, total_tokens: 15 });
      assert.equal(m.attributes.model, "gpt-test");
      assert.equal(m.status, "ok");
    }
    assert.match(JSON.stringify(modelSpans[0]!.input), /why tides/);
    assert.match(JSON.stringify(modelSpans[0]!.output), /lookup_fact/);

    const fact = spans.find((s) => s.kind === "tool" && s.name === "lookup_fact")!;
    assert.equal(fact.status, "ok");
    assert.equal(fact.attributes.mcp_server, "facts");
    assert.deepEqual(fact.input, { topic: "tides" });
    assert.match(JSON.stringify(fact.output), /FACT-42/);
    assert.equal(typeof fact.attributes.tool_call_id, "string");

    const broken = spans.find((s) => s.kind === "tool" && s.name === "broken_fact")!;
    assert.equal(broken.status, "error");
    assert.deepEqual(broken.input, { topic: "waves" });
    assert.match(broken.error ?? "", /fact database offline/);

    const subagent = spans.find((s) => s.kind === "subagent")!;
    assert.equal(subagent.name, "critic");
    assert.equal(subagent.attributes.subagent, "critic");
    assert.match(JSON.stringify(subagent.output), /CRITIQUE: premise two is weak/);
    const nested = modelSpans.filter((m) => ancestors(m).includes(subagent));
    assert.equal(nested.length, 1, "the subagent's model call is under its span");
    assert.match(JSON.stringify(nested[0]!.input), /Critique the tides draft/);
    assert.ok(spans.some((s) => s.kind === "chain" && s.attributes.node), "graph steps are chain spans");
  });
}
