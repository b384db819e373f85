/**
 * The span rules every local trace keeps, whichever way it is built: from the run's stream
 * (core/engine/tracing/stream-trace.ts) or by the callback handler (span-recorder.ts). The
 * deep agent of both trace suites (a model server, the `facts` MCP server, the `critic`
 * subagent) runs the same first and last steps; `assertDeepAgentTrace` checks what its trace
 * must show, read over HTTP (`GET /threads/{thread_id}/runs/{run_id}/trace`), so a new rule
 * written here is asserted for both builders.
 *
 * @example
 * const { body } = await fetchTrace(t.url, threadId, runId);
 * const trace = assertDeepAgentTrace(body.spans, { runId, userInput: /why tides/ });
 * assert.equal(trace.tool("broken_fact").status, "error");
 */
import assert from "node:assert/strict";
import type { Plugin } from "../../core/kernel/hooks.ts";
import type { AgentConfig } from "../../core/config/schema.ts";
import { makeConfig, makeSubagent } from "../harness/_bundle.ts";
import { type Harness, startHarness } from "../harness/_harness.ts";
import type { McpServers } from "../fixtures/mcp-servers/server.ts";
import type { ModelServer, ScriptedReply } from "../fixtures/model-server/server.ts";

/** A span as the trace endpoint answers it. */
export interface Span {
  span_id: string;
  parent_id: string | null;
  kind: string;
  name: string;
  started_at: string;
  ended_at: string | null;
  duration_ms: number | null;
  status: string;
  input: unknown;
  output: unknown;
  error?: string;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
  attributes: Record<string, unknown>;
}

/** `GET {base}/threads/{threadId}/runs/{runId}/trace` with its status and body. */
export async function fetchTrace(
  base: string,
  ids: { threadId: string; runId: string },
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { run_id: string; spans: Span[]; detail?: string } }> {
  const res = await fetch(`${base}/threads/${ids.threadId}/runs/${ids.runId}/trace`, { headers });
  return { status: res.status, body: await res.json() as { run_id: string; spans: Span[]; detail?: string } };
}

/**
 * The deep agent both suites trace: the main agent (`MARKER-MAIN`) with the `facts` MCP
 * server and the `critic` subagent (`MARKER-CRITIC`); `config` adds to its configuration.
 */
export function startDeepAgent(
  opts: { models: ModelServer; mcp: McpServers; config?: Partial<AgentConfig>; plugins?: Plugin[] },
): Promise<Harness> {
  return startHarness({
    config: makeConfig({
      mcp: { facts: { transport: "http", url: opts.mcp.httpUrl, headers: { "x-api-key": "k" }, timeout: 20 } },
      subagents: [makeSubagent({ name: "critic", description: "Critiques drafts" })],
      ...opts.config,
    }),
    files: {
      "AGENTS.md": "Main agent. MARKER-MAIN",
      "subagents/critic/AGENTS.md": "You are the critic. MARKER-CRITIC",
    },
    plugins: opts.plugins ?? [],
    server: opts.models,
  });
}

/**
 * The model's replies for a deep-agent run: `lookup_fact`, then `second` (a tool call of the
 * suite's own), then the `critic` subagent through `task` (it answers with a critique), then
 * "All done.". `assertDeepAgentTrace` checks the trace of such a run.
 */
export function deepAgentScript(second: ScriptedReply): ScriptedReply[] {
  return [
    { when: "MARKER-MAIN", toolCalls: [{ name: "lookup_fact", args: { topic: "tides" } }] },
    second,
    {
      when: "MARKER-MAIN",
      toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Critique the tides draft" } }],
    },
    { when: "MARKER-CRITIC", text: "CRITIQUE: premise two is weak" },
    { when: "MARKER-MAIN", text: "All done." },
  ];
}

/** A deep-agent trace, checked: its run span, its model spans, its tool spans by name, a span's ancestors. */
export interface DeepAgentTrace {
  runSpan: Span;
  modelSpans: Span[];
  tool(name: string): Span;
  ancestors(s: Span): Span[];
}

/**
 * Asserts the rules of a finished deep-agent run's trace (`deepAgentScript`): one run span
 * (the run's id, no parent, ok, the user's input, the final answer), every span ended, under
 * the run and listed by start; five model calls with their usage; the `lookup_fact` MCP tool
 * call; the subagent's span with its model call nested under it; graph steps as chain spans.
 */
export function assertDeepAgentTrace(spans: Span[], expect: { runId: string; userInput: RegExp }): DeepAgentTrace {
  const starts = spans.map((s) => s.started_at);
  assert.deepEqual(starts, [...starts].sort(), "ordered by start");
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const ancestors = (s: Span) => {
    const out: Span[] = [];
    for (let p = byId.get(s.parent_id ?? ""); p; p = byId.get(p.parent_id ?? "")) out.push(p);
    return out;
  };

  const runSpan = spans.find((s) => s.kind === "run")!;
  assert.equal(runSpan.span_id, expect.runId);
  assert.equal(runSpan.parent_id, null);
  assert.equal(runSpan.status, "ok");
  assert.equal(runSpan.attributes.run_status, "success");
  assert.match(JSON.stringify(runSpan.input), expect.userInput);
  assert.match(JSON.stringify(runSpan.output), /All done\./);
  for (const s of spans) {
    assert.notEqual(s.status, "running");
    assert.ok(s.ended_at && typeof s.duration_ms === "number" && s.duration_ms >= 0, `${s.name} has ended`);
    if (s !== runSpan) assert.ok(ancestors(s).includes(runSpan), `${s.kind} ${s.name} is under the run`);
  }

  const modelSpans = spans.filter((s) => s.kind === "model");
  assert.equal(modelSpans.length, 5, "four calls of the main agent's model and one of the subagent's");
  for (const m of modelSpans) {
    assert.deepEqual(m.usage, { input_tokens: 10, output_tokens: 5, total_tokens: 15 });
    assert.equal(m.attributes.model, "gpt-test");
    assert.equal(m.status, "ok");
  }
  assert.match(JSON.stringify(modelSpans[0]!.input), expect.userInput);
  assert.match(JSON.stringify(modelSpans[0]!.output), /lookup_fact/);

  const tool = (name: string) => {
    const found = spans.find((s) => s.kind === "tool" && s.name === name);
    assert.ok(found, `a span for the ${name} tool call`);
    return found;
  };
  const fact = tool("lookup_fact");
  assert.equal(fact.status, "ok");
  assert.equal(fact.attributes.mcp_server, "facts");
  assert.deepEqual(fact.input, { topic: "tides" });
  assert.match(JSON.stringify(fact.output), /FACT-42/);
  assert.equal(typeof fact.attributes.tool_call_id, "string");

  const subagent = spans.find((s) => s.kind === "subagent")!;
  assert.equal(subagent.name, "critic");
  assert.equal(subagent.attributes.subagent, "critic");
  assert.match(JSON.stringify(subagent.output), /CRITIQUE: premise two is weak/);
  const nested = modelSpans.filter((m) => ancestors(m).includes(subagent));
  assert.equal(nested.length, 1, "the subagent's model call is under its span");
  assert.match(JSON.stringify(nested[0]!.input), /Critique the tides draft/);
  assert.ok(spans.some((s) => s.kind === "chain" && s.attributes.node), "graph steps are chain spans");
  return { runSpan, modelSpans, tool, ancestors };
}
