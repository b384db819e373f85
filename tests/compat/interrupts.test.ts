/**
 * Compatibility (see _target.ts; `npm run test:compat -- --peer` runs it against LangGraph's
 * server): static interrupts per run, dynamic `interrupt()`, resume with a new input or
 * `Command`, subgraphs with checkpoints of their own, `recursion_limit`.
 */
import type { ThreadState } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { collect } from "../server/_harness.ts";
import { PEER, startTarget, type Target } from "./_target.ts";

let t: Target;
before(async () => (t = await startTarget()));
after(async () => await t?.close());

describe("static interrupts", () => {
  test("interrupt_before leaves the thread interrupted before the node; a null input resumes", async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "chain", { input: {}, interruptBefore: ["b"] });
    const thread = await t.client.threads.get(th.thread_id);
    assert.equal(thread.status, "interrupted");
    const state = await t.client.threads.getState(th.thread_id);
    assert.deepEqual(state.next, ["b"]);
    assert.deepEqual(state.values, { log: ["a"] });
    const out = await t.client.runs.wait(th.thread_id, "chain", { input: null });
    assert.deepEqual(out, { log: ["a", "b", "c"] });
    assert.equal((await t.client.threads.get(th.thread_id)).status, "idle");
  });

  test("interrupt_after stops after the node; Command goto resumes elsewhere", async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "chain", { input: {}, interruptAfter: ["a"] });
    assert.equal((await t.client.threads.get(th.thread_id)).status, "interrupted");
    assert.deepEqual((await t.client.threads.getState(th.thread_id)).next, ["b"]);
    const out = await t.client.runs.wait(th.thread_id, "chain", { command: { goto: "c" } });
    assert.deepEqual((out as { log: string[] }).log.slice(0, 1), ["a"]);
    assert.ok((out as { log: string[] }).log.includes("c"));
    assert.equal((await t.client.threads.get(th.thread_id)).status, "idle");
  });

  test('interrupt_before "*" stops before the first node', async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "chain", { input: {}, interruptBefore: "*" });
    assert.equal((await t.client.threads.get(th.thread_id)).status, "interrupted");
    assert.deepEqual((await t.client.threads.getState(th.thread_id)).next, ["a"]);
  });
});

describe("dynamic interrupts", () => {
  test("interrupt() streams __interrupt__, records the thread's interrupts, Command resume continues", async () => {
    const th = await t.client.threads.create();
    const events = await collect(t.client.runs.stream(th.thread_id, "hitl", { input: {}, streamMode: ["updates"] }));
    const intr = events.find((e) => e.event === "updates" && "__interrupt__" in (e.data as object));
    assert.ok(intr, JSON.stringify(events));
    const [first] = (intr.data as { __interrupt__: Array<{ value: unknown; id: string }> }).__interrupt__;
    assert.deepEqual(first!.value, { question: "approve?" });
    assert.equal(typeof first!.id, "string");
    const thread = await t.client.threads.get(th.thread_id);
    assert.equal(thread.status, "interrupted");
    const recorded = Object.values(thread.interrupts ?? {}).flat() as Array<{ value: unknown }>;
    assert.deepEqual(recorded.map((i) => i.value), [{ question: "approve?" }]);
    const state = await t.client.threads.getState(th.thread_id);
    assert.deepEqual(state.tasks[0]!.interrupts.map((i) => i.value), [{ question: "approve?" }]);
    const out = await t.client.runs.wait(th.thread_id, "hitl", { command: { resume: "yes" } });
    assert.deepEqual(out, { answer: "yes", log: ["asked", "routed", "approved"] });
    assert.equal((await t.client.threads.get(th.thread_id)).status, "idle");
  });

  test("a node's Command goto routes the resumed run", async () => {
    const th = await t.client.threads.create();
    const first = await t.client.runs.wait(th.thread_id, "hitl", { input: {} });
    assert.ok("__interrupt__" in (first as object));
    const out = await t.client.runs.wait(th.thread_id, "hitl", { command: { resume: "no" } });
    assert.deepEqual((out as { log: string[] }).log, ["asked", "routed", "rejected"]);
  });
});

describe("strict resume", () => {
  // Ours only: langgraph-cli dev 1.5.1 ignores `strict_resume` (the SDK documents that a server
  // without strict resume does); we honour it, as the Agent Server does, and report it in /info.
  const ours = { skip: PEER ? "langgraph-cli dev ignores strict_resume" : false };

  test(
    "a strict resume with no waiting interrupt fails with UnknownInterruptError and leaves the thread as it was",
    ours,
    async () => {
      const info = (await (await fetch(`${t.url}/info`)).json()) as { flags: Record<string, unknown> };
      assert.equal(info.flags.strict_resume, true);
      const th = await t.client.threads.create();
      await t.client.runs.wait(th.thread_id, "chain", { input: {} });
      const before = await t.client.threads.getState(th.thread_id);
      const run = await t.client.runs.create(th.thread_id, "chain", {
        command: { resume: "late" },
        strictResume: true,
      });
      await t.client.runs.join(th.thread_id, run.run_id);
      const done = await t.client.runs.get(th.thread_id, run.run_id);
      assert.equal(done.status, "error");
      const events = await collect(t.client.runs.joinStream(th.thread_id, run.run_id));
      const err = events.find((e) => e.event === "error")?.data as { error: string; message: string };
      assert.equal(err.error, "UnknownInterruptError", JSON.stringify(events));
      assert.match(err.message, /No interrupt is waiting/);
      const now = await t.client.threads.getState(th.thread_id);
      assert.equal(now.checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
      assert.deepEqual(now.values, before.values);
      assert.equal((await t.client.threads.get(th.thread_id)).status, "idle");
    },
  );

  test(
    "a strict resume map naming an interrupt that is not waiting fails, naming it; the waiting one resumes",
    ours,
    async () => {
      const th = await t.client.threads.create();
      await t.client.runs.wait(th.thread_id, "hitl", { input: {} });
      const before = await t.client.threads.getState(th.thread_id);
      const id = before.tasks[0]!.interrupts[0]!.id!;
      const stale = "0".repeat(32);
      const run = await t.client.runs.create(th.thread_id, "hitl", {
        command: { resume: { [stale]: "yes" } },
        strictResume: true,
      });
      await t.client.runs.join(th.thread_id, run.run_id);
      assert.equal((await t.client.runs.get(th.thread_id, run.run_id)).status, "error");
      const events = await collect(t.client.runs.joinStream(th.thread_id, run.run_id));
      const err = events.find((e) => e.event === "error")?.data as { error: string; message: string };
      assert.equal(err.error, "UnknownInterruptError");
      assert.ok(err.message.includes(stale) && err.message.includes(id), err.message);
      assert.equal(
        (await t.client.threads.getState(th.thread_id)).checkpoint.checkpoint_id,
        before.checkpoint.checkpoint_id,
      );
      assert.equal((await t.client.threads.get(th.thread_id)).status, "interrupted");
      const out = await t.client.runs.wait(th.thread_id, "hitl", {
        command: { resume: { [id]: "yes" } },
        strictResume: true,
      });
      assert.deepEqual(out, { answer: "yes", log: ["asked", "routed", "approved"] });
    },
  );

  test("without strict_resume a resume with no waiting interrupt is not refused", async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "chain", { input: {} });
    const run = await t.client.runs.create(th.thread_id, "chain", { command: { resume: "late" } });
    await t.client.runs.join(th.thread_id, run.run_id);
    assert.equal((await t.client.runs.get(th.thread_id, run.run_id)).status, "success");
  });
});

describe("subgraphs", () => {
  test("an interrupt inside a subgraph: its state and checkpoint namespace are visible, resume finishes the parent", async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "parent", { input: {} });
    assert.equal((await t.client.threads.get(th.thread_id)).status, "interrupted");
    const state = await t.client.threads.getState(th.thread_id, undefined, { subgraphs: true });
    assert.deepEqual(state.next, ["child"]);
    const task = state.tasks[0]!;
    assert.equal(task.name, "child");
    const sub = task.state as ThreadState<{ items: string[] }>;
    assert.deepEqual(sub.values.items, ["before", "inner"]);
    assert.deepEqual(sub.next, ["gate"]);
    assert.match(sub.checkpoint.checkpoint_ns, /^child:/);
    // Without `subgraphs`, the task's checkpoint is its config as LangGraph sends it: no null keys added.
    const flat = (await t.client.threads.getState(th.thread_id)).tasks[0]!.checkpoint as Record<string, unknown>;
    assert.deepEqual(Object.keys(flat).sort(), ["checkpoint_ns", "thread_id"]);
    assert.equal(flat.thread_id, th.thread_id);
    assert.match(flat.checkpoint_ns as string, /^child:/);
    const out = await t.client.runs.wait(th.thread_id, "parent", { command: { resume: "ok" } });
    // The subgraph's output carries the parent's items again through the shared reducer (LangGraph's semantics).
    assert.deepEqual(out, { items: ["before", "before", "inner", "gate:ok", "after"] });
  });

  test("interrupt_before naming a node of a subgraph is accepted (no 422) and runs as LangGraph runs it", async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "parent", { input: {}, interruptBefore: ["inner"] });
    assert.equal((await t.client.threads.get(th.thread_id)).status, "interrupted");
    const state = await t.client.threads.getState(th.thread_id, undefined, { subgraphs: true });
    assert.deepEqual(state.next, ["child"]);
    // LangGraph's dev server passes the names to the run; a subgraph compiled without them
    // runs on to its own `interrupt()` (proven side by side: both stop at "gate").
    const sub = state.tasks[0]!.state as ThreadState<{ items: string[] }>;
    assert.deepEqual(sub.next, ["gate"]);
    assert.deepEqual(sub.values.items, ["before", "inner"]);
    // A name that is no node at any level is still refused (ours; LangGraph's dev server ignores it).
    if (t.name === "ours") {
      const err = await t.client.runs.wait(th.thread_id, "parent", { input: {}, interruptBefore: ["nowhere"] })
        .catch((e) => e);
      assert.equal(err.status, 422);
    }
  });

  test("stream_subgraphs names events by namespace", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "parent", { input: {}, streamMode: ["updates"], streamSubgraphs: true }),
    );
    assert.ok(events.some((e) => e.event.startsWith("updates|child:")), events.map((e) => e.event).join(","));
  });
});

describe("recursion_limit", () => {
  test("config.recursion_limit bounds the run's steps", async () => {
    const th = await t.client.threads.create();
    // The SDK's wait raises the run's error.
    await assert.rejects(
      t.client.runs.wait(th.thread_id, "loop", { input: { until: 10 }, config: { recursion_limit: 3 } }),
      /GraphRecursionError/,
    );
    assert.equal((await t.client.threads.get(th.thread_id)).status, "error");
    const th2 = await t.client.threads.create();
    const ok = await t.client.runs.wait(th2.thread_id, "loop", {
      input: { until: 30 },
      config: { recursion_limit: 40 },
    });
    assert.equal((ok as { count: number }).count, 30);
  });
});
