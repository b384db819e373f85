/**
 * The cross-replica bus under injected delays: two brokers (two "replicas") on one
 * PostgreSQL schema, signalling over Redis (`AGENTCLI_TEST_REDIS_URL`) or PostgreSQL
 * LISTEN/NOTIFY. A follower on the replica that does not run the run must get every event
 * as it is published, even those published while it subscribes or while it reads the stored
 * events: the safety-net poll is set to an hour, so a missed wake-up hangs the test instead
 * of costing 5 s.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { type RemoteBus, RunBroker } from "../../core/engine/broker/broker.ts";
import { openRedisBus } from "../../core/engine/broker/redis-bus.ts";
import { openPostgresBus } from "../../core/engine/broker/pg-bus.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { openSql } from "../../core/storage/sql.ts";
import { openStorage, type Storage } from "../../core/storage/storage.ts";
import type { RunEvent } from "../../core/storage/run-events.ts";

const PG_URL = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.AGENTCLI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const schema = `agentcli_bus_${process.pid}_${Date.now()}`;
const url = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;

let storage: Storage;
before(async () => {
  const admin = await openSql({ url: PG_URL });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  storage = await openStorage({ url });
});
after(async () => {
  await storage?.close();
  const admin = await openSql({ url: PG_URL });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
});

interface Gate {
  promise: Promise<void>;
  open(): void;
}
function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** The scenario, for any bus: `openBus` opens one replica's connection to it. */
export async function noMissedWakeups(openBus: () => Promise<RemoteBus>): Promise<void> {
  const [busA, busB] = await Promise.all([openBus(), openBus()]);
  const subscribing = gate();
  const subscribeCalled = gate();
  let reading: Gate | null = null;
  const readDone = gate();
  const seenOnBus = new Map<number, Gate>();
  const seen = (id: number) => seenOnBus.get(id) ?? (seenOnBus.set(id, gate()), seenOnBus.get(id)!);
  // Replica B subscribes late (the subscription is held until the test opens it) and reads
  // slowly (the read's result is held while the test publishes).
  const slowBus: RemoteBus = {
    ...busB,
    async subscribeRun(runId, onMessage) {
      subscribeCalled.open();
      await subscribing.promise;
      return busB.subscribeRun(runId, (m) => {
        onMessage(m);
        if (!("end" in m)) seen(m.id).open();
      });
    },
  };
  const slowLog = {
    append: (runId: string, events: readonly RunEvent[]) => storage.events.append(runId, events),
    async read(runId: string, afterId?: number) {
      const rows = await storage.events.read(runId, afterId);
      if (reading) {
        const g = reading;
        reading = null;
        readDone.open();
        await g.promise;
      }
      return rows;
    },
  };
  const a = new RunBroker({ log: storage.events, remote: busA });
  const b = new RunBroker({ log: slowLog, remote: slowBus, pollMs: 3_600_000 });
  try {
    const runId = randomUUID();
    a.start(runId);
    a.publish(runId, { event: "metadata", data: { run_id: runId } });
    await a.flush(runId);

    let statusReads = 0;
    const follow = b.follow(runId, { status: async () => (statusReads++, "running") });
    const got: RunEvent[] = [];
    const consumed = (async () => {
      for (let r = await follow.next();; r = await follow.next()) {
        if (r.done) return r.value;
        got.push(r.value);
      }
    })();

    // Published (and stored) while B subscribes: not on the bus for B, so it is read from the log.
    await subscribeCalled.promise;
    a.publish(runId, { event: "values", data: { n: 2 } });
    await a.flush(runId);
    reading = gate();
    const whileReading = reading;
    subscribing.open();

    // Published while B reads (after its query ran): only the bus brings it.
    await readDone.promise;
    a.publish(runId, { event: "values", data: { n: 3 } });
    await seen(3).promise;
    whileReading.open();
    while (got.length < 3) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(got.map((e) => e.id), [1, 2, 3]);

    // Then live, and the end.
    a.publish(runId, { event: "values", data: { n: 4 } });
    await a.flush(runId);
    a.finish(runId, { status: "success", output: { n: 4 } });
    const end = await consumed;
    assert.deepEqual(got.map((e) => e.id), [1, 2, 3, 4]);
    assert.deepEqual(got.map((e) => JSON.parse(e.data)), [{ run_id: runId }, { n: 2 }, { n: 3 }, { n: 4 }]);
    assert.equal(end?.status, "success");
    assert.equal(statusReads, 1, "storage is read once, to catch up; every later event came over the bus");
  } finally {
    await a.close();
    await b.close();
  }
}

test("redis: a follower misses no event published while it subscribes or reads", { timeout: 60_000 }, async () => {
  await noMissedWakeups(() => openRedisBus(REDIS_URL, silentLog));
});

test("postgres: a follower misses no event published while it subscribes or reads", { timeout: 60_000 }, async () => {
  await noMissedWakeups(() => openPostgresBus(url, silentLog));
});

test("postgres: an event too large for NOTIFY reaches the follower through the log", { timeout: 60_000 }, async () => {
  const [busA, busB] = await Promise.all([openPostgresBus(url, silentLog), openPostgresBus(url, silentLog)]);
  const a = new RunBroker({ log: storage.events, remote: busA });
  const b = new RunBroker({ log: storage.events, remote: busB, pollMs: 3_600_000 });
  try {
    const runId = randomUUID();
    a.start(runId);
    a.publish(runId, { event: "metadata", data: { run_id: runId } });
    await a.flush(runId);
    const got: RunEvent[] = [];
    const follow = b.follow(runId, { status: async () => "running" });
    got.push((await follow.next()).value as RunEvent);
    const big = "x".repeat(20_000);
    a.publish(runId, { event: "values", data: { big } });
    got.push((await follow.next()).value as RunEvent);
    a.finish(runId, { status: "success", output: { big } });
    const end = await follow.next();
    assert.deepEqual(got.map((e) => e.id), [1, 2]);
    assert.equal(JSON.parse(got[1]!.data).big.length, 20_000);
    assert.equal(end.done, true);
    assert.equal((end.value as { status: string }).status, "success");
  } finally {
    await a.close();
    await b.close();
  }
});

test(
  "postgres: a run running on another replica is followed from its stored events at once, not after waiting for it to start here",
  { timeout: 60_000 },
  async () => {
    const [busA, busB] = await Promise.all([openPostgresBus(url, silentLog), openPostgresBus(url, silentLog)]);
    const a = new RunBroker({ log: storage.events, remote: busA });
    // Any wait for the run to start on B, or for a poll, hangs the test.
    const b = new RunBroker({ log: storage.events, remote: busB, pollMs: 3_600_000, startWaitMs: 3_600_000 });
    try {
      const runId = randomUUID();
      a.start(runId);
      a.publish(runId, { event: "metadata", data: { run_id: runId } });
      a.publish(runId, { event: "values", data: { n: 2 } });
      await a.flush(runId);
      // The model is thinking: nothing more is published for now, so only the log has these.
      const follow = b.follow(runId, { status: async () => "running", knownStatus: "running" });
      const first = await follow.next();
      const second = await follow.next();
      assert.deepEqual([first.value, second.value].map((e) => (e as RunEvent).id), [1, 2]);
      a.finish(runId, { status: "success", output: null });
      const end = await follow.next();
      assert.equal(end.done, true);
      assert.equal((end.value as { status: string }).status, "success");
    } finally {
      await a.close();
      await b.close();
    }
  },
);

/**
 * A follower on B of a run that starts on A only after B has read the (empty) log: A knows
 * B follows it (B said so when it subscribed, before A started it), so every event and the
 * end reach B over the bus; storage is not polled again (the poll is set to an hour).
 */
async function followedBeforeStart(openBus: () => Promise<RemoteBus>): Promise<void> {
  const [busA, busB] = await Promise.all([openBus(), openBus()]);
  const a = new RunBroker({ log: storage.events, remote: busA });
  const b = new RunBroker({ log: storage.events, remote: busB, pollMs: 3_600_000 });
  try {
    const runId = randomUUID();
    const readOnce = gate();
    let statusReads = 0;
    const follow = b.follow(runId, { status: async () => (statusReads++, readOnce.open(), "pending") });
    const got: RunEvent[] = [];
    const consumed = (async () => {
      for (let r = await follow.next();; r = await follow.next()) {
        if (r.done) return r.value;
        got.push(r.value);
      }
    })();
    await readOnce.promise;
    a.start(runId);
    a.publish(runId, { event: "metadata", data: { run_id: runId } });
    a.publish(runId, { event: "values", data: { n: 2 } });
    a.finish(runId, { status: "success", output: { n: 2 } });
    const end = await consumed;
    assert.deepEqual(got.map((e) => e.id), [1, 2]);
    assert.equal(end?.status, "success");
    assert.equal(statusReads, 1);
  } finally {
    await a.close();
    await b.close();
  }
}

test(
  "redis: a follower that came before its run started gets every event over the bus",
  { timeout: 60_000 },
  async () => {
    await followedBeforeStart(() => openRedisBus(REDIS_URL, silentLog));
  },
);

test(
  "postgres: a follower that came before its run started gets every event over the bus",
  { timeout: 60_000 },
  async () => {
    await followedBeforeStart(() => openPostgresBus(url, silentLog));
  },
);

/**
 * A follower subscribes to a run on the bus only when it must follow it elsewhere: a run that
 * runs on its replica, or is queued there for that replica's workers (affinity), is followed
 * from memory (on PostgreSQL, a LISTEN and an UNLISTEN per run saved); a run pending with no
 * such hold is subscribed to at once, as before.
 */
async function subscribesOnlyWhenRemote(openBus: () => Promise<RemoteBus>): Promise<void> {
  const bus = await openBus();
  const subscribed: string[] = [];
  const counting: RemoteBus = {
    ...bus,
    subscribeRun(runId, onMessage) {
      subscribed.push(runId);
      return bus.subscribeRun(runId, onMessage);
    },
  };
  const b = new RunBroker({ log: storage.events, remote: counting, pollMs: 3_600_000 });
  const drain = async (it: AsyncGenerator<RunEvent, unknown>) => {
    const ids: number[] = [];
    for (let r = await it.next();; r = await it.next()) {
      if (r.done) return { ids, end: r.value };
      ids.push(r.value.id);
    }
  };
  try {
    // Running here.
    const local = randomUUID();
    b.start(local);
    b.publish(local, { event: "metadata", data: { run_id: local } });
    const following = drain(b.follow(local, { status: async () => "running", knownStatus: "running" }));
    b.publish(local, { event: "values", data: { n: 1 } });
    b.finish(local, { status: "success", output: { n: 1 } });
    assert.deepEqual((await following).ids, [1, 2]);

    // Queued here with affinity, then started here.
    const held = randomUUID();
    b.hold(held, 10_000);
    const followingHeld = drain(b.follow(held, { status: async () => "pending", knownStatus: "pending" }));
    await new Promise((r) => setTimeout(r, 20));
    b.start(held);
    b.publish(held, { event: "metadata", data: { run_id: held } });
    b.finish(held, { status: "success", output: null });
    const h = await followingHeld;
    assert.deepEqual(h.ids, [1]);
    assert.equal((h.end as { status: string }).status, "success");
    assert.deepEqual(subscribed, [], "no bus subscription for runs followed where they run");

    // Pending, not held here: it may start on another replica, so the follower subscribes first.
    const elsewhere = randomUUID();
    const followingElsewhere = drain(b.follow(elsewhere, { status: async () => "pending", knownStatus: "pending" }));
    while (!subscribed.length) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(subscribed, [elsewhere]);
    b.start(elsewhere);
    b.publish(elsewhere, { event: "metadata", data: { run_id: elsewhere } });
    b.finish(elsewhere, { status: "success", output: null });
    assert.deepEqual((await followingElsewhere).ids, [1]);
  } finally {
    await b.close();
  }
}

test("redis: a follower subscribes on the bus only for a run that does not run (or wait) on its replica", {
  timeout: 60_000,
}, async () => {
  await subscribesOnlyWhenRemote(() => openRedisBus(REDIS_URL, silentLog));
});

test("postgres: a follower subscribes on the bus only for a run that does not run (or wait) on its replica", {
  timeout: 60_000,
}, async () => {
  await subscribesOnlyWhenRemote(() => openPostgresBus(url, silentLog));
});
