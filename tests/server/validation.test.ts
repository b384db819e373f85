/**
 * Every accepted field means something: meaningless values are a 422 naming the field (or a
 * 404 naming what does not exist), before anything is written; races between clients are a
 * 409, never a 500 (run on both storage engines, as every server suite).
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

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; detail: string; json: any }> {
  const res = await fetch(`${t.url}${path}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : { "content-type": "application/json" },
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  return { status: res.status, detail: json?.detail ?? "", json };
}

const hi = { messages: [{ role: "user", content: "hi" }] };

async function threadWithTurns(n: number): Promise<string> {
  const { thread_id } = await t.client.threads.create();
  for (let i = 0; i < n; i++) {
    await t.client.runs.wait(thread_id, "echo", { input: { messages: [{ role: "user", content: `turn ${i}` }] } });
  }
  return thread_id;
}

describe("meaningless values are refused, naming the field", () => {
  test("run fields: durability, interrupt nodes, after_seconds", async () => {
    const th = (await t.client.threads.create()).thread_id;
    const bogus = await call("POST", `/threads/${th}/runs`, { assistant_id: "echo", input: hi, durability: "bogus" });
    assert.equal(bogus.status, 422);
    assert.match(bogus.detail, /durability/);
    const node = await call("POST", `/threads/${th}/runs`, {
      assistant_id: "echo",
      input: hi,
      interrupt_before: ["nope"],
    });
    assert.equal(node.status, 422);
    assert.match(node.detail, /interrupt_before names "nope", not a node of graph "echo" \(its nodes: respond/);
    const after = await call("POST", `/threads/${th}/runs`, {
      assistant_id: "echo",
      input: hi,
      interrupt_after: ["respond", "x"],
    });
    assert.match(after.detail, /interrupt_after names "x"/);
    for (const seconds of [2_592_001, 1e12]) {
      const late = await call("POST", `/threads/${th}/runs`, {
        assistant_id: "echo",
        input: hi,
        after_seconds: seconds,
      });
      assert.equal(late.status, 422, String(seconds));
      assert.match(late.detail, /after_seconds: must be at most 2592000 \(30 days\)/);
    }
    assert.equal((await t.client.runs.list(th)).length, 0, "nothing was created");
    // Good values still work, durability included.
    const ok = await call("POST", `/threads/${th}/runs/wait`, {
      assistant_id: "echo",
      input: hi,
      durability: "exit",
      interrupt_before: "*",
    });
    assert.equal(ok.status, 200);
  });

  test("a run from a checkpoint that does not exist is a 404 and the earlier turns stay", async () => {
    const th = await threadWithTurns(2);
    const bad = await call("POST", `/threads/${th}/runs/wait`, {
      assistant_id: "echo",
      input: hi,
      checkpoint_id: "1f0c0000-0000-6000-8000-000000000000",
    });
    assert.equal(bad.status, 404);
    assert.match(bad.detail, /Checkpoint "1f0c0000-0000-6000-8000-000000000000" not found/);
    const state = await t.client.threads.getState<{ messages: unknown[] }>(th);
    assert.equal(state.values.messages.length, 4);
    // A real one works: the run continues from there.
    const history = await t.client.threads.getHistory(th, { limit: 10 });
    const first = history.find((h) => (h.values as { messages?: unknown[] }).messages?.length === 2)!;
    const from = await call("POST", `/threads/${th}/runs/wait`, {
      assistant_id: "echo",
      input: hi,
      checkpoint_id: first.checkpoint.checkpoint_id,
    });
    assert.equal(from.status, 200);
    assert.equal(from.json.messages.length, 4);
  });

  test("store put: index and ttl", async () => {
    const index = await call("PUT", "/store/items", { namespace: ["a"], key: "k", value: {}, index: "zzz" });
    assert.equal(index.status, 422);
    assert.match(index.detail, /index: must be false or an array of field paths/);
    for (const ttl of [-1, 0, "soon", 1e9]) {
      const r = await call("PUT", "/store/items", { namespace: ["a"], key: "k", value: {}, ttl });
      assert.equal(r.status, 422, JSON.stringify(ttl));
      assert.match(r.detail, /^Invalid request: ttl/);
    }
    assert.equal(
      (await call("PUT", "/store/items", { namespace: ["a"], key: "k", value: {}, index: false, ttl: 5 })).status,
      204,
    );
  });

  test("thread ttl", async () => {
    for (const ttl of [-5, "bogus", { ttl: 0 }, { ttl: 5, strategy: "archive" }]) {
      const r = await call("POST", "/threads", { ttl });
      assert.equal(r.status, 422, JSON.stringify(ttl));
      assert.match(r.detail, /ttl/);
    }
    assert.equal((await call("POST", "/threads", { ttl: { ttl: 60, strategy: "delete" } })).status, 200);
    const th = (await t.client.threads.create()).thread_id;
    assert.equal((await call("PATCH", `/threads/${th}`, { ttl: "x" })).status, 422);
  });

  test("prune: a body is required; keep_latest keeps the thread and its state, delete deletes", async () => {
    for (const body of [undefined, null, {}, { thread_ids: "x" }, { thread_ids: [], strategy: "all" }]) {
      const r = await call("POST", "/threads/prune", body);
      assert.equal(r.status, 422, JSON.stringify(body));
    }
    const kept = await threadWithTurns(2);
    assert.ok((await t.client.threads.getHistory(kept, { limit: 100 })).length > 2);
    const r = await call("POST", "/threads/prune", {
      thread_ids: [kept, crypto.randomUUID()],
      strategy: "keep_latest",
    });
    assert.deepEqual(r.json, { pruned_count: 1 });
    const state = await t.client.threads.getState<{ messages: unknown[] }>(kept);
    assert.equal(state.values.messages.length, 4, "the latest state is kept");
    assert.equal(
      (await t.client.threads.getHistory(kept, { limit: 100 })).length,
      1,
      "only the latest checkpoint remains",
    );
    // The thread goes on from its latest state.
    const next = await call("POST", `/threads/${kept}/runs/wait`, { assistant_id: "echo", input: hi });
    assert.equal(next.json.messages.length, 6);
    assert.deepEqual((await call("POST", "/threads/prune", { thread_ids: [kept] })).json, { pruned_count: 1 });
    assert.equal((await call("GET", `/threads/${kept}`)).status, 404);
  });
});

test("a run delayed past what one timer holds (after_seconds >= 2,147,484) waits quietly", async () => {
  const runs = t.server.storage.runs;
  const original = runs.nextDelay.bind(runs);
  let calls = 0;
  runs.nextDelay = () => (calls++, original());
  try {
    const th = (await t.client.threads.create()).thread_id;
    const run = await call("POST", `/threads/${th}/runs`, {
      assistant_id: "echo",
      input: hi,
      after_seconds: 2_592_000,
    });
    assert.equal(run.status, 200);
    calls = 0;
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(calls < 5, `the delayed-run timer re-armed ${calls} times in 0.5 s (a busy loop)`);
    assert.equal((await t.client.runs.get(th, run.json.run_id)).status, "pending");
    await t.client.runs.cancel(th, run.json.run_id);
  } finally {
    runs.nextDelay = original;
  }
});

describe("races are 409, never 500", () => {
  test("many runs created on one thread at once (reject): one runs, the others are 409", async () => {
    const th = (await t.client.threads.create()).thread_id;
    // The accepted run outlasts the burst however loaded the machine is (a short one could end
    // before the last request is handled, and that request would then rightly be accepted).
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        call("POST", `/threads/${th}/runs`, {
          assistant_id: "slow",
          input: { ms: 60_000 },
          multitask_strategy: "reject",
        })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.ok(statuses.every((s) => s === 200 || s === 409), statuses.join(","));
    assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(","));
    assert.match(results.find((r) => r.status === 409)!.detail, /in progress/);
    await t.client.runs.cancel(th, results.find((r) => r.status === 200)!.json.run_id);
  });

  for (const strategy of ["interrupt", "rollback", "enqueue"]) {
    test(`many runs created on one thread at once (${strategy}): no 500`, async () => {
      const th = (await t.client.threads.create()).thread_id;
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          call("POST", `/threads/${th}/runs`, {
            assistant_id: "slow",
            input: { ms: 50 },
            multitask_strategy: strategy,
          })),
      );
      for (const r of results) assert.ok(r.status === 200 || r.status === 409, `${r.status} ${r.detail}`);
      await t.client.runs.cancelMany?.({ threadId: th, status: "all" } as never).catch(() => {});
    });
  }

  test("many runs created at once on a thread that does not exist yet (if_not_exists create): one creates it", async () => {
    const th = crypto.randomUUID();
    const results = await Promise.all(
      Array.from(
        { length: 8 },
        () => call("POST", `/threads/${th}/runs`, { assistant_id: "echo", input: hi, if_not_exists: "create" }),
      ),
    );
    const statuses = results.map((r) => r.status);
    assert.ok(statuses.every((s) => s === 200 || s === 409), statuses.join(","));
    assert.ok(statuses.includes(200));
  });

  test("deleting a thread while runs are created on it and the thread is read: no 500", async () => {
    for (let i = 0; i < 3; i++) {
      const th = (await t.client.threads.create()).thread_id;
      await call("POST", `/threads/${th}/runs`, { assistant_id: "slow", input: { ms: 200 } });
      const results = await Promise.all([
        call("DELETE", `/threads/${th}`),
        call("POST", `/threads/${th}/runs`, { assistant_id: "echo", input: hi, multitask_strategy: "enqueue" }),
        call("POST", `/threads/${th}/runs/wait`, { assistant_id: "echo", input: hi, multitask_strategy: "interrupt" }),
        call("POST", `/threads/${th}/state`, { values: hi, as_node: "respond" }),
        call("POST", `/threads/${th}/copy`),
        call("POST", "/threads/prune", { thread_ids: [th], strategy: "keep_latest" }),
        call("DELETE", `/threads/${th}`),
      ]);
      for (const r of results) assert.ok(r.status < 500, `${r.status} ${r.detail}`);
    }
  });
});
