/**
 * The stream log in batches (core/storage/run-events.ts, issue 33): a run's events are written
 * one row per batch, and a read after an id inside a batch returns exactly the events after
 * it, merged with the single rows (the claim's `metadata` event), on the suite's engine. Two
 * replicas on PostgreSQL: a run in flight on one, joined from the other with `Last-Event-ID`
 * inside a logged batch, replays only what follows, each event once and in order.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type RunEvent, unpackBatch } from "../../core/storage/run-events.ts";
import { sqlOf } from "../../core/storage/storage.ts";
import { pgSchema, startTestServer, type TestServer, until } from "./_harness.ts";

const events = (from: number, to: number): RunEvent[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({
    id: from + i,
    event: i % 2 ? "custom" : "values",
    data: i === 2 ? "not JSON\n5\nat all 🦊" : JSON.stringify({ n: from + i, text: 'a "quoted"\nline 🦊' }),
  }));

async function batchRows(t: TestServer, runId: string): Promise<Array<{ seq: number; n: number }>> {
  const { rows } = await sqlOf(t.server.storage).query<{ seq: number; events: string }>(
    "SELECT seq, events FROM run_event_batches WHERE run_id = $1 ORDER BY seq",
    [runId],
  );
  return rows.map((r) => ({ seq: Number(r.seq), n: unpackBatch(r.events, null).length }));
}

describe("the stream log in batches", () => {
  let t: TestServer;
  before(async () => void (t = await startTestServer()));
  after(() => t?.close());

  test("one row per batch; a read from inside a batch returns exactly what follows", async () => {
    const log = t.server.storage.events;
    await sqlOf(t.server.storage).query(
      "INSERT INTO run_events (run_id, seq, event, data) VALUES ('r1', 1, 'metadata', '{\"run_id\":\"r1\"}')",
    );
    await log.append("r1", events(2, 6));
    await log.append("r1", events(7, 11));
    assert.deepEqual(await batchRows(t, "r1"), [{ seq: 6, n: 5 }, { seq: 11, n: 5 }]);
    const all = await log.read("r1");
    assert.deepEqual(all.map((e) => e.id), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.equal(all[0]!.event, "metadata");
    assert.deepEqual(all.slice(1), [...events(2, 6), ...events(7, 11)], "events as written, data byte for byte");
    for (const after of [1, 3, 6, 8, 10]) {
      assert.deepEqual((await log.read("r1", after)).map((e) => e.id), events(after + 1, 11).map((e) => e.id));
    }
    assert.deepEqual(await log.read("r1", 11), []);
    // A batch written twice (a retried write) is read once.
    await log.append("r1", events(7, 11));
    assert.deepEqual((await log.read("r1", 5)).map((e) => e.id), [6, 7, 8, 9, 10, 11]);
  });
});

describe("two replicas: joined from inside a logged batch", () => {
  let a: TestServer;
  let b: TestServer;
  let db: Awaited<ReturnType<typeof pgSchema>>;
  before(async () => {
    db = await pgSchema("agentcli_batches");
    a = await startTestServer({ storage: { url: db.url }, workers: 2 });
    b = await startTestServer({ storage: { url: db.url }, workers: 0 });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await db?.drop();
  });

  test("the follower gets the events after the id, once each, in order, then live ones", async () => {
    const th = await b.client.threads.create();
    const run = await b.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, streamMode: ["custom"] });
    const batch = await until(
      "a batch of ticks logged",
      async () => (await batchRows(a, run.run_id)).find((r) => r.n >= 3),
    );
    const inside = batch.seq - 1; // the batch's last event is `seq`: `inside` is before it, in it
    const got: number[] = [];
    // SSE ids count from 0: event id n is sent as n - 1.
    for await (const e of b.client.runs.joinStream(th.thread_id, run.run_id, { lastEventId: String(inside - 1) })) {
      got.push(Number((e as { id?: string }).id) + 1);
      if (got.length >= 20) break;
    }
    assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => inside + 1 + i));
    await b.client.runs.cancel(th.thread_id, run.run_id, true);
  });
});
