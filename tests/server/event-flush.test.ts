/**
 * When a run's stream events reach the durable log (core/engine/broker/broker.ts). On the embedded
 * engine (an exclusive database) every follower reads a live run's events from memory, so
 * the log is written at most every 250 ms (most runs end sooner and their events go with the
 * statement that records the end); on a shared database, where followers on other replicas
 * read the log, every 25 ms, unless a bus carries the signals and no replica but the one
 * running the run follows it (250 ms then too: a follower elsewhere says so over the bus, and
 * from then on the run's events are logged within 25 ms). Either way a long run's events
 * reach the log while it runs.
 */
import assert from "node:assert/strict";
import { after, before, mock, test } from "node:test";
import { type RemoteBus, RunBroker } from "../../core/engine/broker/broker.ts";
import { openStorage, type Storage } from "../../core/storage/storage.ts";
import type { RunEvent } from "../../core/storage/run-events.ts";

let storage: Storage;
before(async () => {
  storage = await openStorage();
});
after(async () => {
  await storage?.close();
});

/** The real event log, with the batches appended to it recorded. */
function recordingLog(): {
  log: ConstructorParameters<typeof RunBroker>[0]["log"];
  batches: Array<{ runId: string; events: RunEvent[] }>;
} {
  const batches: Array<{ runId: string; events: RunEvent[] }> = [];
  return {
    batches,
    log: {
      append: async (runId: string, events: RunEvent[]) => {
        batches.push({ runId, events: [...events] });
        await storage.events.append(runId, events);
      },
      read: (runId: string, after?: number) => storage.events.read(runId, after),
    },
  };
}

async function untilLogged(runId: string, n: number): Promise<RunEvent[]> {
  for (;;) {
    const logged = await storage.events.read(runId);
    if (logged.length >= n) return logged;
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const exclusive of [true, false]) {
  const every = exclusive ? 250 : 25;
  test(`${exclusive ? "exclusive" : "shared"} database: a live run's events are logged ${every} ms after the first one not logged`, () => {
    const { log, batches } = recordingLog();
    const broker = new RunBroker({ log, exclusive });
    const runId = crypto.randomUUID();
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      broker.start(runId);
      broker.publish(runId, { event: "metadata", data: { run_id: runId }, durable: true });
      broker.publish(runId, { event: "values", data: { n: 1 } });
      mock.timers.tick(every - 1);
      assert.equal(batches.length, 0, "not before the interval");
      broker.publish(runId, { event: "values", data: { n: 2 } });
      mock.timers.tick(1);
      assert.deepEqual(
        batches.map((b) => b.events.map((e) => e.id)),
        [[2, 3]],
        "both events in one batch; the durable one not again",
      );
    } finally {
      mock.timers.reset();
    }
  });
}

/** A bus that carries nothing, but lets the test say that another replica follows a run. */
function quietBus(): { bus: RemoteBus; followedFrom: (runId: string) => void } {
  const follow: Array<(runId: string) => void> = [];
  const bus: RemoteBus = {
    publishEvent() {},
    subscribeRun: async () => () => {},
    publishCancel() {},
    onCancel() {},
    publishWake() {},
    onWake() {},
    publishFollow() {},
    onFollow: (fn) => void follow.push(fn),
    async close() {},
  };
  return { bus, followedFrom: (runId) => follow.forEach((fn) => fn(runId)) };
}

test("shared database with a bus: a run followed only where it runs is logged every 250 ms; once a replica that does not run it follows it, within 25 ms", async () => {
  // Appends recorded only (they end at once, so the next batch is scheduled without real time passing).
  const batches: Array<{ runId: string; events: RunEvent[] }> = [];
  const log = {
    append: async (runId: string, events: RunEvent[]) => void batches.push({ runId, events: [...events] }),
    read: async () => [],
  };
  const { bus, followedFrom } = quietBus();
  const broker = new RunBroker({ log, remote: bus });
  const runId = crypto.randomUUID();
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    broker.start(runId);
    broker.publish(runId, { event: "metadata", data: { run_id: runId }, durable: true });
    broker.publish(runId, { event: "values", data: { n: 1 } });
    mock.timers.tick(249);
    assert.equal(batches.length, 0, "no follower elsewhere: not before 250 ms");
    mock.timers.tick(1);
    assert.deepEqual(batches.map((b) => b.events.map((e) => e.id)), [[2]]);
    await new Promise((r) => setImmediate(r)); // the append has ended
    broker.publish(runId, { event: "values", data: { n: 2 } });
    mock.timers.tick(10);
    followedFrom(runId); // another replica follows it now: the pending batch is due 25 ms after the follow
    mock.timers.tick(24);
    assert.equal(batches.length, 1);
    mock.timers.tick(1);
    assert.deepEqual(batches.map((b) => b.events.map((e) => e.id)), [[2], [3]]);
  } finally {
    mock.timers.reset();
  }
});

test("exclusive database: a run that goes on has its events in the log while it runs; one that ends sooner hands them to its end", async () => {
  const { log, batches } = recordingLog();
  const broker = new RunBroker({ log, exclusive: true });
  const long = crypto.randomUUID();
  broker.start(long);
  broker.publish(long, { event: "metadata", data: { run_id: long }, durable: true });
  await storage.events.append(long, [{ id: 1, event: "metadata", data: JSON.stringify({ run_id: long }) }]);
  broker.publish(long, { event: "custom", data: { tick: 1 } });
  broker.publish(long, { event: "custom", data: { tick: 2 } });
  // Not ended: the log gets them anyway (a crash now would keep them).
  assert.deepEqual((await untilLogged(long, 3)).map((e) => e.event), ["metadata", "custom", "custom"]);

  const short = crypto.randomUUID();
  broker.start(short);
  broker.publish(short, { event: "values", data: { n: 1 } });
  const rest = await broker.takeUnflushed(short);
  assert.deepEqual(rest.map((e) => e.id), [1], "the end writes what was not logged yet");
  assert.deepEqual(batches.filter((b) => b.runId === short), []);
  assert.ok(batches.some((b) => b.runId === long));
});
