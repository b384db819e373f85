/**
 * What the usage tests share (./usage.test.ts, ./usage-budgets.test.ts): a real LangChain agent
 * (ChatOpenAI against the scripted model server) whose `task` tool runs a subagent graph as
 * deepagents does, scripted turns of three model calls, and servers with usage limits, their
 * traces kept or not (the two ways usage is read).
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { z } from "zod";
import { NO_USAGE_LIMITS, Prices, type UsageLimits } from "../../core/engine/index.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { collect, startTestServer, type TestServer } from "./_harness.ts";

/** The scripted model server of the file that started it ({@link startModels}). */
export let models: ModelServer;
export const PRICES = new Prices({ openai: { "gpt-test": { input: 1, output: 2, cached_input: 0.5 } } });

/** An agent whose `task` tool runs a subagent graph as deepagents does (invoked with the tool's config). */
export function agentGraph() {
  const model = () =>
    new ChatOpenAI({ model: "gpt-test", apiKey: "sk-test", configuration: { baseURL: models.openaiBaseUrl } });
  const subagent = createAgent({ model: model(), tools: [] });
  const task = tool(
    async ({ description }, config) => {
      const out = await subagent.invoke({ messages: [{ role: "user", content: `subagent: ${description}` }] }, config);
      return out.messages.at(-1)!.content as string;
    },
    {
      name: "task",
      description: "Runs a subagent",
      schema: z.object({ description: z.string(), subagent_type: z.string() }),
    },
  );
  return createAgent({ model: model(), tools: [task] });
}

/** Scripts one turn of `marker`: a task call, the subagent's answer, the final answer (3 model calls). */
export function scriptTurn(marker: string, usage?: { input: number; output: number; cached?: number }) {
  models.script(
    { toolCalls: [{ name: "task", args: { description: `dig ${marker}`, subagent_type: "r" } }], when: marker, usage },
    { text: `found ${marker}`, when: `subagent: dig ${marker}`, usage },
    { text: `done ${marker}`, when: (r) => r.messages.some((m) => m.content.includes(`found ${marker}`)), usage },
  );
}

/**
 * Usage is read from the run's stream when the run has no callback handler
 * (core/engine/usage/stream-usage.ts): from its `tasks` chunks by the stream-built trace when
 * traces are kept (the default; core/engine/tracing/stream-trace.ts), from its `updates`
 * chunks when they are off; by the handler when the run has one anyway (./stream-trace.test.ts
 * covers that with `messages-tuple`). The tests of recording and budgets run both ways.
 */
export const WAYS = [
  { name: "traces kept: the stream-built trace counts", traceRetentionSeconds: 604_800 },
  { name: "traces off: read from the stream's updates", traceRetentionSeconds: 0 },
];
let traceRetentionSeconds = 604_800;

/** The trace retention of the servers {@link serverWith} starts from now on (a way of {@link WAYS}). */
export function useTraceRetention(seconds: number): void {
  traceRetentionSeconds = seconds;
}

export async function serverWith(
  limits: Partial<UsageLimits>,
  storage?: { url: string } | { dataDir: string },
): Promise<TestServer> {
  return await startTestServer({
    graphs: { agent: async () => agentGraph() },
    usage: { prices: PRICES, limits: { ...NO_USAGE_LIMITS, ...limits } },
    ttl: { traceRetentionSeconds },
    ...(storage ? { storage } : {}),
  });
}

export async function post(t: TestServer, path: string, body: unknown): Promise<Response> {
  return await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Starts the scripted model server ({@link models}); `stopModels` closes it. */
export async function startModels(): Promise<void> {
  models = await startModelServer();
}

export async function stopModels(): Promise<void> {
  await models?.close();
}

/** Waits for a minute with time left in it (a per-minute window must not roll over mid-test). */
export async function waitForMinuteStart(): Promise<void> {
  while (new Date().getUTCSeconds() > 45) await new Promise((r) => setTimeout(r, 250));
}

/** The file's hooks: the scripted model server ({@link models}) started before its tests, closed after. */
export function useModels(): void {
  before(startModels);
  after(stopModels);
}

/**
 * Streams a run of `content` with the agent (on `threadId`, or stateless when null) and
 * returns its error event, asserting there is one.
 */
export async function streamedError(t: TestServer, threadId: string | null, content: string) {
  const payload = { input: { messages: [{ role: "user", content }] } };
  const events = await collect(
    threadId === null ? t.client.runs.stream(null, "agent", payload) : t.client.runs.stream(threadId, "agent", payload),
  );
  const error = events.find((e) => e.event === "error");
  assert.ok(error, `an error event among ${events.map((e) => e.event).join(", ")}`);
  return error as { event: string; data: { error: string; message: string } };
}
