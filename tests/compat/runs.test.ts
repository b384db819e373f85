/**
 * Compatibility (see _target.ts): cancel (running and finished runs), join, join-stream
 * event ids and rejoin, a join of a run that does not exist, multitask strategies, thread
 * search and bulk deletion by `metadata.assistant_id`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { collect } from "../server/_harness.ts";
import { startTarget, type Target } from "./_target.ts";

let t: Target;
before(async () => (t = await startTarget()));
after(async () => await t?.close());

const status = (err: unknown) => (err as { status?: number }).status;

async function waitStatus(threadId: string, runId: string, want: string[]): Promise<string> {
  for (;;) {
    const r = await t.client.runs.get(threadId, runId).catch(() => null);
    if (r && want.includes(r.status)) return r.status;
    await new Promise((res) => setTimeout(res, 50));
  }
}

describe("cancel and join", () => {
  test("cancelling a running run interrupts it; cancelling it again is a no-op success", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "loop", { input: { until: 100, ms: 100 } });
    await waitStatus(th.thread_id, run.run_id, ["running"]);
    await t.client.runs.cancel(th.thread_id, run.run_id, true);
    assert.equal((await t.client.runs.get(th.thread_id, run.run_id)).status, "interrupted");
    await t.client.runs.cancel(th.thread_id, run.run_id);
    const done = await t.client.runs.create(th.thread_id, "loop", { input: { until: 1 } });
    await t.client.runs.join(th.thread_id, done.run_id);
    await t.client.runs.cancel(th.thread_id, done.run_id);
    assert.equal((await t.client.runs.get(th.thread_id, done.run_id)).status, "success");
  });

  test("join-stream ids count from 0 and Last-Event-ID resumes after that id; join returns the final values", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "loop", {
      input: { until: 4, ms: 300 },
      streamMode: ["updates"],
      streamResumable: true,
    });
    const first: Array<{ id?: string; event: string }> = [];
    for await (const e of t.client.runs.joinStream(th.thread_id, run.run_id, { lastEventId: "-1" })) {
      first.push(e);
      if (first.length === 2) break;
    }
    assert.deepEqual(first.map((e) => [e.id, e.event]), [["0", "metadata"], ["1", "updates"]]);
    const rest = await collect(t.client.runs.joinStream(th.thread_id, run.run_id, { lastEventId: "1" }));
    assert.deepEqual(rest.map((e) => [e.id, e.event]), [["2", "updates"], ["3", "updates"], ["4", "updates"]]);
    assert.deepEqual(await t.client.runs.join(th.thread_id, run.run_id), { count: 4, until: 4, ms: 300 });
  });

  test("joining the stream of a run that does not exist streams an error event", async () => {
    const th = await t.client.threads.create();
    const events = await collect(t.client.runs.joinStream(th.thread_id, "1f000000-0000-7000-8000-000000000001"));
    assert.equal(events.at(-1)?.event, "error");
  });
});

describe("multitask strategies", () => {
  test("reject refuses a second run while one is in flight", async () => {
    const th = await t.client.threads.create();
    const first = await t.client.runs.create(th.thread_id, "loop", { input: { until: 100, ms: 50 } });
    const err = await t.client.runs.create(th.thread_id, "loop", { input: { until: 1 }, multitaskStrategy: "reject" })
      .catch((e) => e);
    // LangGraph Platform answers 409; LangGraph.js's dev server 422. We answer as the Platform.
    assert.equal(status(err), t.name === "peer" ? 422 : 409);
    await t.client.runs.cancel(th.thread_id, first.run_id, true);
  });

  test("enqueue runs the second after the first; interrupt cancels the first; rollback removes it", async () => {
    const th = await t.client.threads.create();
    const a = await t.client.runs.create(th.thread_id, "loop", { input: { until: 3, ms: 50 } });
    const b = await t.client.runs.create(th.thread_id, "loop", { input: { until: 4 }, multitaskStrategy: "enqueue" });
    assert.deepEqual(await t.client.runs.join(th.thread_id, b.run_id), { count: 4, until: 4, ms: 50 });
    assert.equal((await t.client.runs.get(th.thread_id, a.run_id)).status, "success");

    const c = await t.client.runs.create(th.thread_id, "loop", { input: { count: 0, until: 100, ms: 100 } });
    await waitStatus(th.thread_id, c.run_id, ["running"]);
    const d = await t.client.runs.create(th.thread_id, "loop", {
      input: { count: 0, until: 1, ms: 0 },
      multitaskStrategy: "interrupt",
    });
    await t.client.runs.join(th.thread_id, d.run_id);
    assert.equal((await t.client.runs.get(th.thread_id, c.run_id)).status, "interrupted");
    assert.equal((await t.client.runs.get(th.thread_id, d.run_id)).status, "success");

    const e = await t.client.runs.create(th.thread_id, "loop", { input: { count: 0, until: 100, ms: 100 } });
    await waitStatus(th.thread_id, e.run_id, ["running"]);
    const f = await t.client.runs.create(th.thread_id, "loop", {
      input: { count: 0, until: 1, ms: 0 },
      multitaskStrategy: "rollback",
    });
    await t.client.runs.join(th.thread_id, f.run_id);
    if (t.name === "peer") {
      // LangGraph.js's dev server marks a running run cancelled by "rollback" as "error" and
      // keeps it; the Agent Server docs (and we) delete it with its checkpoints.
      assert.equal(await waitStatus(th.thread_id, e.run_id, ["error", "interrupted"]), "error");
      return;
    }
    for (;;) {
      const gone = await t.client.runs.get(th.thread_id, e.run_id).catch((err) => err);
      if (status(gone) === 404) break;
      await new Promise((res) => setTimeout(res, 50));
    }
  });
});

describe("threads by assistant", () => {
  test("threads.search and assistant deletion with delete_threads follow metadata.assistant_id", async () => {
    const assistant = await t.client.assistants.create({ graphId: "chain", name: "compat-owner" });
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, assistant.assistant_id, { input: {} });
    const tagged = await t.client.threads.create({ metadata: { assistant_id: assistant.assistant_id } });
    const found = await t.client.threads.search({ metadata: { assistant_id: assistant.assistant_id }, limit: 10 });
    assert.deepEqual(found.map((x) => x.thread_id).sort(), [th.thread_id, tagged.thread_id].sort());
    assert.equal((await t.client.threads.get(th.thread_id)).metadata?.graph_id, "chain");
    await t.client.assistants.delete(assistant.assistant_id, { deleteThreads: true });
    for (const id of [th.thread_id, tagged.thread_id]) {
      assert.equal(status(await t.client.threads.get(id).catch((e) => e)), 404);
    }
  });
});
