/**
 * The dev blocking monitor (`agentcli dev` without `--allow-blocking`): it warns when a run
 * blocks the event loop, and stays quiet while a graph loads (its modules, its first run)
 * and while the server starts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Annotation, StateGraph } from "@langchain/langgraph";
import { monitorBlocking } from "../../core/cli/dev.ts";
import { startTestServer } from "./_harness.ts";

const State = Annotation.Root({ block: Annotation<number>(), done: Annotation<boolean>() });

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* synchronous work */ }
}

const blockingGraph = () =>
  new StateGraph(State)
    .addNode("work", (s: typeof State.State) => {
      busy(s.block ?? 0);
      return { done: true };
    })
    .addEdge("__start__", "work")
    .compile();

test("warns for a run that blocks the event loop, not for graph loading or a first run", async () => {
  const warnings: string[] = [];
  const t = await startTestServer({
    graphs: {
      // Loading blocks (like importing a big module) and so does the first run.
      blocker: async () => {
        busy(400);
        return blockingGraph();
      },
    },
  });
  const stop = monitorBlocking({ warn: (m) => warnings.push(m) }, () => t.server.warmRuns(), 150);
  try {
    busy(400); // the server starting, outside any run
    await new Promise((r) => setTimeout(r, 250));
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "blocker", { input: { block: 400 } });
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(warnings, [], "loading a graph and its first run are not reported");

    await t.client.runs.wait(th.thread_id, "blocker", { input: { block: 50 } });
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(warnings, [], "short synchronous work is fine");

    // Long enough that the thread itself computes for over half the threshold even when a
    // loaded machine gives it a small share of a core (a stall of the machine is not reported).
    await t.client.runs.wait(th.thread_id, "blocker", { input: { block: 1500 } });
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /event loop was blocked for \d+ ms during a run/);
    assert.match(warnings[0]!, /--allow-blocking/);
  } finally {
    stop();
    await t.close();
  }
});
