/**
 * Usage of the deep agent: a run whose main agent delegates to a subagent through
 * deepagents' `task` tool records every model call, the subagent's included, under the
 * parent run, priced by the model plugin that built the model (`openai`, from its table
 * under an override for the test model).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { openStorage, type Storage } from "../../core/storage/index.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { pricesFromEnv, UsageMeter } from "../../core/engine/index.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { makeConfig, makeSubagent, userConfigurable } from "./_bundle.ts";
import { type Harness, startHarness } from "./_harness.ts";

let h: Harness;
let storage: Storage;
before(async () => {
  storage = await openStorage();
  h = await startHarness({
    config: makeConfig({ subagents: [makeSubagent({ name: "critic", description: "Critiques drafts" })] }),
    files: {
      "AGENTS.md": "Main agent. MARKER-MAIN",
      "subagents/critic/AGENTS.md": "You are the critic. MARKER-CRITIC",
    },
  });
});
after(async () => {
  await h.dispose();
  await storage.close();
});

test("a subagent's model calls count toward the parent run, priced by the plugin that built the model", async () => {
  h.server.script(
    { when: "MARKER-MAIN", toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Critique" } }] },
    { when: "MARKER-CRITIC", text: "CRITIQUE: fine", usage: { input: 1000, output: 100 } },
    { when: "MARKER-MAIN", text: "The critic says fine." },
  );
  const prices = pricesFromEnv(
    { AGENTCLI_MODEL_PRICES: JSON.stringify({ "openai:gpt-test": { input: 2, output: 8 } }) },
    new PluginDriver(builtinPlugins),
  );
  assert.deepEqual(prices.of("openai", "gpt-5-2025-08-07"), { input: 1.25, output: 10, cached_input: 0.125 });
  const meter = new UsageMeter({ store: storage.usage, prices, log: silentLog });
  const runId = crypto.randomUUID();
  const usage = meter.startRun({
    run_id: runId,
    thread_id: "u1",
    assistant_id: "a1",
    subject: { user: "user:alice", client: null },
  });
  await h.graph.invoke({ messages: [{ role: "user", content: "critique my draft" }] }, {
    configurable: { thread_id: "u1", ...userConfigurable("alice") },
    callbacks: usage.callbacks,
  });
  await usage.flush();
  assert.deepEqual(h.server.pending(), [], "every scripted reply was used");
  const critic = h.server.requests.filter((r) => r.system.includes("MARKER-CRITIC")).length;
  const main = h.server.requests.filter((r) => r.system.includes("MARKER-MAIN")).length;
  assert.equal(critic, 1);
  const total = await storage.usage.ofRun(runId);
  assert.equal(total.calls, main + critic, "the main agent's calls and the subagent's");
  assert.equal(total.input_tokens, main * 10 + 1000);
  assert.equal(total.output_tokens, main * 5 + 100);
  assert.ok(Math.abs(total.cost_usd! - (main * (10 * 2 + 5 * 8) + 1000 * 2 + 100 * 8) / 1e6) < 1e-12);
  const byModel = await storage.usage.aggregate({ groupBy: "model", limit: 10 });
  assert.deepEqual(byModel.map((r) => r.key), ["openai:gpt-test"]);
  const byUser = await storage.usage.aggregate({ groupBy: "user", limit: 10 });
  assert.deepEqual(byUser.map((r) => r.key), ["user:alice"]);
});

test("read from the run's stream (no callback handler): the subagent's calls are there too", async () => {
  h.server.script(
    { when: "MARKER-MAIN", toolCalls: [{ name: "task", args: { subagent_type: "critic", description: "Again" } }] },
    { when: "MARKER-CRITIC", text: "CRITIQUE: good", usage: { input: 700, output: 70 } },
    { when: "MARKER-MAIN", text: "The critic says good." },
  );
  const meter = new UsageMeter({ store: storage.usage, log: silentLog });
  const runId = crypto.randomUUID();
  const usage = meter.startRun({
    run_id: runId,
    thread_id: "u2",
    assistant_id: "a1",
    subject: { user: "user:alice", client: null },
  });
  const before = h.server.requests.length;
  const stream = await h.graph.stream({ messages: [{ role: "user", content: "critique it again" }] }, {
    configurable: { thread_id: "u2", ...userConfigurable("alice") },
    streamMode: ["updates"],
    subgraphs: true,
  });
  for await (const [ns, mode, chunk] of stream as AsyncIterable<[string[], string, unknown]>) {
    if (mode === "updates") usage.observe(ns, chunk);
  }
  await usage.flush();
  const calls = h.server.requests.length - before;
  const total = await storage.usage.ofRun(runId);
  assert.equal(total.calls, calls, "every model call, the subagent's included");
  assert.equal(total.input_tokens, (calls - 1) * 10 + 700);
  assert.equal(total.output_tokens, (calls - 1) * 5 + 70);
  // The harness's messages name the plugin that built the model (priced by its table).
  const state = await h.graph.getState({ configurable: { thread_id: "u2", ...userConfigurable("alice") } });
  const last = (state.values as { messages: Array<{ response_metadata?: Record<string, unknown> }> }).messages.at(-1)!;
  assert.equal(last.response_metadata?.agentcli_model_provider, "openai");
});
