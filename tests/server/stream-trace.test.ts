/**
 * The local trace two ways (issue 35 item 5): a run without a callback handler anyway (the
 * `values` stream mode) has its trace built from its `tasks` stream (core/engine/tracing/
 * stream-trace.ts); one with a handler anyway (`messages-tuple`) has it from the trace
 * recorder's handler (span-recorder.ts). Both show model calls with their usage, an MCP tool
 * call, a failing tool call, and a subagent's model call nested under its `task` call; the
 * run's usage counts every call once (the subagent's too). The deep agent (model server, MCP
 * tools, a subagent) served by the agent server, driven by the SDK client. The span rules both
 * builders keep are written once, in _trace-assertions.ts; here, what differs between them.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Harness } from "../harness/_harness.ts";
import { type McpServers, startMcpServers } from "../fixtures/mcp-servers/server.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { startTestServer, type TestServer } from "./_harness.ts";
import { assertDeepAgentTrace, deepAgentScript, fetchTrace, startDeepAgent } from "./_trace-assertions.ts";

let models: ModelServer;
let mcp: McpServers;
let h: Harness;
let t: TestServer;

before(async () => {
  models = await startModelServer();
  mcp = await startMcpServers();
  h = await startDeepAgent({ models, mcp });
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
      ...deepAgentScript({ when: "MARKER-MAIN", toolCalls: [{ name: "broken_fact", args: { topic: "waves" } }] }),
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
    const { status, body } = await fetchTrace(t.url, { threadId: thread.thread_id, runId });
    assert.equal(status, 200);
    const trace = assertDeepAgentTrace(body.spans, { runId, userInput: /why tides/ });
    assert.equal(trace.runSpan.attributes.trace_from, mode === "values" ? "stream" : "callbacks");

    const broken = trace.tool("broken_fact");
    assert.equal(broken.status, "error");
    assert.deepEqual(broken.input, { topic: "waves" });
    assert.match(broken.error ?? "", /fact database offline/);
  });
}
