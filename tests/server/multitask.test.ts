/**
 * Cancellation and the multitask strategies on a busy thread: reject (409), interrupt,
 * rollback, enqueue; cancel of pending, running and finished runs, with wait and action;
 * `on_disconnect: "cancel"`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function untilStatus(threadId: string, runId: string, status: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await t.client.runs.get(threadId, runId)).status === status) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`run ${runId} never became ${status}`);
}

describe("cancel", () => {
  test("cancel a running run with wait: interrupted, thread idle", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
    await untilStatus(th.thread_id, run.run_id, "running");
    await t.client.runs.cancel(th.thread_id, run.run_id, true);
    assert.equal((await t.client.runs.get(th.thread_id, run.run_id)).status, "interrupted");
    assert.equal((await t.client.threads.get(th.thread_id)).status, "idle");
  });

  test("cancel a pending run; cancelling a finished run is a no-op success (as LangGraph's server)", async () => {
    const th = await t.client.threads.create();
    const first = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
    const second = await t.client.runs.create(th.thread_id, "slow", {
      input: { ms: 10 },
      multitaskStrategy: "enqueue",
    });
    assert.equal((await t.client.runs.get(th.thread_id, second.run_id)).status, "pending");
    await t.client.runs.cancel(th.thread_id, second.run_id);
    assert.equal((await t.client.runs.get(th.thread_id, second.run_id)).status, "interrupted");
    await t.client.runs.cancel(th.thread_id, first.run_id, true);
    await t.client.runs.cancel(th.thread_id, first.run_id);
    assert.equal((await t.client.runs.get(th.thread_id, first.run_id)).status, "interrupted");
  });

  test("cancelMany by thread", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
    await untilStatus(th.thread_id, run.run_id, "running");
    await t.client.runs.cancelMany({ threadId: th.thread_id });
    await t.client.runs.join(th.thread_id, run.run_id);
    assert.equal((await t.client.runs.get(th.thread_id, run.run_id)).status, "interrupted");
  });

  test("deleting a thread cancels its runs in flight: the running one stops, the pending one never runs", async () => {
    const own = await startTestServer();
    try {
      await own.client.runs.wait(null, "slow", { input: { ms: 1 } }); // warm: warmRuns() counts this graph's runs
      const th = await own.client.threads.create();
      const run = await own.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
      await own.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, multitaskStrategy: "enqueue" });
      for (let i = 0; i < 6000 && (await own.client.runs.get(th.thread_id, run.run_id)).status !== "running"; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(own.server.warmRuns().active, 1);
      await own.client.threads.delete(th.thread_id);
      // Cancelled, it stops at once; not cancelled, it would run on for its 60 s. Waited for up to
      // half of that, so a loaded machine does not fail it.
      for (let i = 0; i < 1500 && own.server.warmRuns().active > 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(own.server.warmRuns().active, 0, "the thread's running run was cancelled");
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(own.server.warmRuns().active, 0, "its pending run did not start");
    } finally {
      await own.close();
    }
  });
});

describe("multitask strategies", () => {
  test("reject: a second run on a busy thread is a 409", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
    await assert.rejects(
      t.client.runs.create(th.thread_id, "slow", { input: { ms: 1 }, multitaskStrategy: "reject" }),
      /409/,
    );
    await t.client.runs.cancel(th.thread_id, run.run_id, true);
  });

  test("interrupt: the running run ends interrupted and the new one runs", async () => {
    const th = await t.client.threads.create();
    const first = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
    await untilStatus(th.thread_id, first.run_id, "running");
    const out =
      (await t.client.runs.wait(th.thread_id, "slow", { input: { ms: 10 }, multitaskStrategy: "interrupt" })) as {
        steps: number;
      };
    assert.equal(out.steps, 1);
    assert.equal((await t.client.runs.get(th.thread_id, first.run_id)).status, "interrupted");
  });

  test("rollback: the running run and its checkpoints are removed", async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "slow", { input: { ms: 1 } });
    const historyBefore = (await t.client.threads.getHistory(th.thread_id, { limit: 100 })).length;
    const first = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
    await untilStatus(th.thread_id, first.run_id, "running");
    const second = await t.client.runs.create(th.thread_id, "slow", {
      input: { ms: 1 },
      multitaskStrategy: "rollback",
    });
    await t.client.runs.join(th.thread_id, second.run_id);
    await assert.rejects(t.client.runs.get(th.thread_id, first.run_id), /404/);
    const runs = await t.client.runs.list(th.thread_id);
    assert.deepEqual(runs.map((r) => r.status), ["success", "success"]);
    const history = await t.client.threads.getHistory(th.thread_id, { limit: 100 });
    const state = await t.client.threads.getState<{ steps: number }>(th.thread_id);
    assert.equal(state.values.steps, 2);
    assert.ok(history.length <= historyBefore + 4);
  });

  test("enqueue: runs execute one after another in order, each with its thread's metadata", async () => {
    const th = await t.client.threads.create({ metadata: { topic: "queued" } });
    const a = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 50 } });
    const b = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 10 }, multitaskStrategy: "enqueue" });
    const c = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 10 }, multitaskStrategy: "enqueue" });
    await t.client.runs.join(th.thread_id, c.run_id);
    const runs = await Promise.all([a, b, c].map((r) => t.client.runs.get(th.thread_id, r.run_id)));
    assert.deepEqual(runs.map((r) => r.status), ["success", "success", "success"]);
    assert.ok(runs[0]!.updated_at <= runs[1]!.updated_at && runs[1]!.updated_at <= runs[2]!.updated_at);
    assert.equal((await t.client.threads.getState<{ steps: number }>(th.thread_id)).values.steps, 3);
    // b and c waited in the queue: their claim read the thread's metadata for their checkpoints.
    const history = await t.client.threads.getHistory(th.thread_id, { limit: 50 });
    for (const r of [a, b, c]) {
      const mine = history.filter((h) => h.metadata?.run_id === r.run_id);
      assert.ok(mine.length > 0, `checkpoints of run ${r.run_id}`);
      for (const h of mine) assert.equal(h.metadata?.topic, "queued");
    }
  });
});

describe("disconnect", () => {
  test("on_disconnect cancel: dropping the stream cancels the run", async () => {
    const th = await t.client.threads.create();
    const controller = new AbortController();
    let runId = "";
    try {
      for await (
        const e of t.client.runs.stream(th.thread_id, "slow", {
          input: { ms: 60_000 },
          streamMode: "custom",
          onDisconnect: "cancel",
          signal: controller.signal,
        })
      ) {
        if (e.event === "metadata") runId = (e.data as { run_id: string }).run_id;
        if (e.event === "custom") controller.abort();
      }
    } catch { /* aborted */ }
    await untilStatus(th.thread_id, runId, "interrupted");
  });

  test("default (continue): dropping the stream leaves the run running", async () => {
    const th = await t.client.threads.create();
    let runId = "";
    for await (const e of t.client.runs.stream(th.thread_id, "slow", { input: { ms: 200 }, streamMode: "custom" })) {
      if (e.event === "metadata") runId = (e.data as { run_id: string }).run_id;
      if (e.event === "custom") break;
    }
    await t.client.runs.join(th.thread_id, runId);
    assert.equal((await t.client.runs.get(th.thread_id, runId)).status, "success");
  });
});

describe("run time limit", () => {
  test("a run that outlives the limit ends `timeout` with an error naming the limit; the thread can run again", async () => {
    const s = await startTestServer({ runTimeoutSeconds: 0.3 });
    try {
      const th = await s.client.threads.create();
      const run = await s.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 } });
      const out = (await s.client.runs.join(th.thread_id, run.run_id)) as {
        __error__?: { error: string; message: string };
      };
      assert.equal((await s.client.runs.get(th.thread_id, run.run_id)).status, "timeout");
      assert.equal(out.__error__?.error, "TimeoutError");
      assert.match(out.__error__!.message, /time limit of 0\.3 s.*AGENTCLI_RUN_TIMEOUT_SECONDS/);
      assert.equal((await s.client.threads.get(th.thread_id)).status, "error");
      const next = await s.client.runs.wait(th.thread_id, "slow", { input: { ms: 10 } });
      assert.equal((next as { steps: number }).steps, 1);
    } finally {
      await s.close();
    }
  });

  test("AGENTCLI_RUN_TIMEOUT_SECONDS: default an hour, 0 for no limit, anything else a clear error", async () => {
    const { runTimeoutSeconds } = await import("../../core/server/host/agent-host.ts");
    assert.equal(runTimeoutSeconds({}), 3600);
    assert.equal(runTimeoutSeconds({ AGENTCLI_RUN_TIMEOUT_SECONDS: "0" }), 0);
    assert.equal(runTimeoutSeconds({ AGENTCLI_RUN_TIMEOUT_SECONDS: "90" }), 90);
    assert.throws(
      () => runTimeoutSeconds({ AGENTCLI_RUN_TIMEOUT_SECONDS: "soon" }),
      /AGENTCLI_RUN_TIMEOUT_SECONDS="soon" is not a number of seconds/,
    );
  });
});
