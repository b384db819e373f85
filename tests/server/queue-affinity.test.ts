/**
 * Queue affinity between replicas on one PostgreSQL schema (signals over LISTEN/NOTIFY): a
 * run created on a replica whose workers are all busy is queued there and held for that
 * replica's workers for `queueAffinitySeconds`; after that any replica takes it (work
 * stealing), and a replica that stops lets go of the runs it holds at once. Also: a bus skips
 * the wake-ups and follows it sent itself.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { openPostgresBus } from "../../core/engine/broker/pg-bus.ts";
import { openRedisBus } from "../../core/engine/broker/redis-bus.ts";
import { newSender, type RemoteBus, signalBody, signalPayload } from "../../core/engine/broker/bus.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { pgSchema, startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const REDIS_URL = process.env.AGENTCLI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

const input = { messages: [{ role: "user", content: "x" }] };

/** Which replica's store holds (or last held) a run's lease. */
async function holderOf(s: TestServer, runId: string): Promise<string | null> {
  const { rows } = await sqlOf(s.server.storage).query<{ lease_holder: string | null }>(
    "SELECT lease_holder FROM runs WHERE run_id = $1",
    [runId],
  );
  return rows[0]?.lease_holder ?? null;
}

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("queue affinity", () => {
  describe("held long enough for a worker to free", () => {
    let db: Awaited<ReturnType<typeof pgSchema>>;
    let a: TestServer;
    let b: TestServer;
    let aClosed = false;
    before(async () => {
      db = await pgSchema("agentcli_affinity_held");
      a = await startTestServer({ storage: { url: db.url }, workers: 1, queueAffinitySeconds: 30 });
      b = await startTestServer({ storage: { url: db.url }, workers: 1, queueAffinitySeconds: 30 });
    });
    after(async () => {
      await b?.close();
      if (!aClosed) await a?.close();
      await db?.drop();
    });

    test("a run queued on a full replica is run by that replica when its worker frees, though another replica is idle", async () => {
      const t1 = await a.client.threads.create();
      const t2 = await a.client.threads.create();
      // Long enough that a's worker is still busy when b is asked below, however loaded the machine.
      const busy = await a.client.runs.create(t1.thread_id, "slow", { input: { ms: 2_500 } });
      assert.equal(busy.status, "running", "a's only worker runs it");
      const queued = await a.client.runs.create(t2.thread_id, "echo", { input });
      assert.equal(queued.status, "pending");
      // b has a free worker and hears of the run (created, its thread's run ended) but leaves it to a.
      await new Promise((r) => setTimeout(r, 250));
      assert.equal((await b.client.runs.get(t2.thread_id, queued.run_id)).status, "pending");
      const out = (await a.client.runs.join(t2.thread_id, queued.run_id)) as { messages: unknown[] };
      assert.equal(out.messages.length, 2);
      assert.equal((await a.client.runs.get(t1.thread_id, busy.run_id)).status, "success");
      assert.equal(
        await holderOf(a, queued.run_id),
        a.server.storage.runs.holder,
        "run by the replica it was queued on",
      );
    });

    test("a replica that stops lets go of the runs it holds: another one takes them at once", async () => {
      const t1 = await a.client.threads.create();
      const t2 = await a.client.threads.create();
      const busy = await a.client.runs.create(t1.thread_id, "slow", { input: { ms: 60_000 } });
      const queued = await a.client.runs.create(t2.thread_id, "echo", { input });
      assert.equal(queued.status, "pending");
      aClosed = true;
      const closing = a.close(); // grace 200 ms: the slow run is handed back, the held run let go
      await until(
        "the held run ran on b",
        10_000,
        async () => (await b.client.runs.get(t2.thread_id, queued.run_id)).status === "success",
      );
      assert.equal(await holderOf(b, queued.run_id), b.server.storage.runs.holder);
      await closing;
      await b.client.runs.cancel(t1.thread_id, busy.run_id);
    });
  });

  describe("held shorter than the run ahead of it", () => {
    let db: Awaited<ReturnType<typeof pgSchema>>;
    let a: TestServer;
    let b: TestServer;
    before(async () => {
      db = await pgSchema("agentcli_affinity_steal");
      a = await startTestServer({ storage: { url: db.url }, workers: 1, queueAffinitySeconds: 0.3 });
      b = await startTestServer({ storage: { url: db.url }, workers: 1, queueAffinitySeconds: 0.3 });
    });
    after(async () => {
      await b?.close();
      await a?.close();
      await db?.drop();
    });

    test("another replica takes a held run once its affinity has ended, and the request waiting on the first replica gets its output", async () => {
      const t1 = await a.client.threads.create();
      const t2 = await a.client.threads.create();
      const busy = await a.client.runs.create(t1.thread_id, "slow", { input: { ms: 60_000 } });
      const started = Date.now();
      // `wait` on a (where it is queued) for a run that b ends up running.
      const out = (await a.client.runs.wait(t2.thread_id, "echo", { input })) as { messages: unknown[] };
      const took = Date.now() - started;
      assert.equal(out.messages.length, 2);
      const [run] = await a.client.runs.list(t2.thread_id);
      assert.equal(await holderOf(a, run!.run_id), b.server.storage.runs.holder, "stolen by the idle replica");
      assert.ok(took >= 300, `not before the affinity ended (${took} ms)`);
      assert.ok(took < 3000, `soon after it, not at the next lease check (${took} ms)`);
      await a.client.runs.cancel(t1.thread_id, busy.run_id);
    });
  });
});

describe("bus signals name their sender", () => {
  test("a payload's body is read by other buses and skipped by its sender; a bare body (an older replica) is read", () => {
    const me = newSender();
    const other = newSender();
    assert.match(me, /^[0-9a-f]{12}$/);
    assert.equal(signalBody(other, signalPayload(me, "run-1")), "run-1");
    assert.equal(signalBody(me, signalPayload(me, "run-1")), null);
    assert.equal(signalBody(me, "run-1"), "run-1");
  });

  for (const mode of ["postgres", "redis"] as const) {
    test(`${mode}: a follow (and over PostgreSQL a wake-up) reaches the other replica, not the one that sent it`, async () => {
      const db = await pgSchema(`agentcli_affinity_sig_${mode}`);
      const open = (): Promise<
        RemoteBus
      > => (mode === "postgres" ? openPostgresBus(db.url, silentLog) : openRedisBus(REDIS_URL, silentLog));
      const [x, y] = await Promise.all([open(), open()]);
      try {
        // Redis channels are shared by every deployment on the server: only this test's run ids count there.
        const one = randomUUID(), two = randomUUID();
        const heard = { x: [] as string[], y: [] as string[] };
        const mine = (id: string) => id === one || id === two;
        if (mode === "postgres") {
          x.onWake(() => heard.x.push("wake"));
          y.onWake(() => heard.y.push("wake"));
        }
        x.onFollow((id) => mine(id) && heard.x.push(`follow ${id}`));
        y.onFollow((id) => mine(id) && heard.y.push(`follow ${id}`));
        if (mode === "postgres") x.publishWake();
        x.publishFollow(one);
        await until("y heard x", 5000, async () => heard.y.length === (mode === "postgres" ? 2 : 1));
        // Sent after x's: x has heard its own signals by the time it hears this, if it were to.
        y.publishFollow(two);
        await until("x heard y's follow", 5000, async () => heard.x.includes(`follow ${two}`));
        assert.deepEqual(heard.y, [...(mode === "postgres" ? ["wake"] : []), `follow ${one}`]);
        assert.deepEqual(heard.x, [`follow ${two}`]);
      } finally {
        await Promise.all([x.close(), y.close()]);
        await db.drop();
      }
    });
  }
});
