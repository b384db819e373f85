/**
 * Thread and store TTLs through the SDK: time is moved by back-dating rows (`updated_at`),
 * then the sweep (`server.sweepExpired()`, the sweeper's own step) deletes what expired: a
 * thread with its runs, stream logs, checkpoints, crons and sandbox (onThreadDeleted); store
 * items after their TTL unless a read refreshed it; server-wide defaults; never a thread
 * with a run in flight; two servers sweeping one PostgreSQL delete each thread once.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ttlFromEnv } from "../../core/engine/queue/ttl-sweeper.ts";
import type { SqlExecutor } from "../../core/storage/sql.ts";
import { pgSchema, startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const INPUT = { messages: [{ role: "user", content: "hi" }] };

async function age(
  sql: SqlExecutor,
  table: "threads" | "store_items",
  minutes: number,
  where: string,
  params: unknown[],
): Promise<void> {
  await sql.query(
    `UPDATE ${table} SET updated_at = now() - make_interval(secs => ${minutes * 60}) WHERE ${where}`,
    params,
  );
}

async function count(sql: SqlExecutor, table: string, threadId: string): Promise<number> {
  const { rows } = await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE thread_id = $1`, [
    threadId,
  ]);
  return Number(rows[0]!.n);
}

describe("TTLs with no server defaults", () => {
  let t: TestServer;
  const deleted: string[] = [];
  before(async () => {
    t = await startTestServer({ onThreadDeleted: async (id) => void deleted.push(id) });
  });
  after(async () => {
    await t?.close();
  });

  test("an expired thread goes with its runs, events, checkpoints, crons and sandbox; others stay", async () => {
    const sql = sqlOf(t.server.storage);
    const th = await t.client.threads.create({ ttl: { ttl: 10, strategy: "delete" } });
    const run = await t.client.runs.create(th.thread_id, "echo", { input: INPUT });
    await t.client.runs.join(th.thread_id, run.run_id);
    await t.client.crons.createForThread(th.thread_id, "echo", { schedule: "0 0 1 1 *", input: INPUT });
    const keep = await t.client.threads.create();
    const young = await t.client.threads.create({ ttl: 10 });
    assert.ok(await count(sql, "checkpoints", th.thread_id) > 0);

    await age(sql, "threads", 9, "thread_id = ANY($1)", [[th.thread_id, keep.thread_id, young.thread_id]]);
    assert.deepEqual((await t.server.sweepExpired()).threads, []);
    await age(sql, "threads", 11, "thread_id = ANY($1)", [[th.thread_id, keep.thread_id]]);
    assert.deepEqual((await t.server.sweepExpired()).threads, [th.thread_id]);

    await assert.rejects(t.client.threads.get(th.thread_id), /404/);
    for (const table of ["runs", "checkpoints", "checkpoint_writes", "checkpoint_blobs", "crons"]) {
      assert.equal(await count(sql, table, th.thread_id), 0, table);
    }
    assert.equal(
      Number(
        (await sql.query<{ n: string }>(
          "SELECT (SELECT count(*) FROM run_events WHERE run_id = $1) + (SELECT count(*) FROM run_event_batches WHERE run_id = $1) AS n",
          [run.run_id],
        )).rows[0]!.n,
      ),
      0,
    );
    assert.deepEqual(deleted, [th.thread_id]);
    assert.equal((await t.client.threads.get(keep.thread_id)).thread_id, keep.thread_id);
    assert.equal((await t.client.threads.get(young.thread_id)).thread_id, young.thread_id);
  });

  test("a run on a thread renews it; PATCH sets a ttl; a thread with a run in flight is never swept", async () => {
    const sql = sqlOf(t.server.storage);
    const th = await t.client.threads.create({ ttl: 5 });
    await age(sql, "threads", 6, "thread_id = $1", [th.thread_id]);
    await t.client.runs.wait(th.thread_id, "echo", { input: INPUT });
    assert.deepEqual((await t.server.sweepExpired()).threads, []);

    const patched = await t.client.threads.create();
    await t.client.threads.update(patched.thread_id, { ttl: 1 });
    const busy = await t.client.threads.create({ ttl: 1 });
    await t.client.runs.create(busy.thread_id, "slow", { input: { ms: 1 }, afterSeconds: 3600 });
    await age(sql, "threads", 2, "thread_id = ANY($1)", [[patched.thread_id, busy.thread_id]]);
    assert.deepEqual((await t.server.sweepExpired()).threads, [patched.thread_id]);
    assert.equal((await t.client.threads.get(busy.thread_id)).status, "busy");
  });

  test("store items expire after their ttl unless a read refreshes it; ttl null never expires", async () => {
    const sql = sqlOf(t.server.storage);
    await t.client.store.putItem(["ttl"], "short", { v: 1 }, { ttl: 1 });
    await t.client.store.putItem(["ttl"], "read", { v: 2 }, { ttl: 1 });
    await t.client.store.putItem(["ttl"], "searched", { v: 3 }, { ttl: 1 });
    await t.client.store.putItem(["ttl"], "forever", { v: 4 });
    await age(sql, "store_items", 2, "namespace = $1", [["ttl"]]);
    // Reads refresh by default; a read with refreshTtl: false does not.
    assert.equal((await t.client.store.getItem(["ttl"], "short", { refreshTtl: false }))!.value.v, 1);
    assert.equal((await t.client.store.getItem(["ttl"], "read"))!.value.v, 2);
    const found = await t.client.store.searchItems(["ttl"], { filter: { v: 3 }, refreshTtl: true });
    assert.equal(found.items.length, 1);
    assert.equal((await t.server.sweepExpired()).items, 1);
    assert.equal(await t.client.store.getItem(["ttl"], "short"), null);
    const left = (await t.client.store.searchItems(["ttl"], { refreshTtl: false })).items.map((i) => i.key).sort();
    assert.deepEqual(left, ["forever", "read", "searched"]);
  });

  test("negative, zero or oversized ttl is a 422", async () => {
    await assert.rejects(t.client.threads.create({ ttl: -1 }), /422/);
    await assert.rejects(t.client.threads.create({ ttl: { ttl: 0, strategy: "delete" } }), /422/);
    const th = await t.client.threads.create();
    await assert.rejects(t.client.threads.update(th.thread_id, { ttl: -5 }), /422/);
    await assert.rejects(t.client.store.putItem(["ttl"], "bad", { v: 1 }, { ttl: -1 }), /422/);
    await assert.rejects(t.client.store.putItem(["ttl"], "bad", { v: 1 }, { ttl: 10_000_000 }), /422/);
    const res = await fetch(`${t.url}/store/items?namespace=ttl&key=forever&refresh_ttl=maybe`);
    assert.equal(res.status, 422);
  });
});

describe("TTLs with server defaults (AGENTCLI_THREAD_TTL_MINUTES, AGENTCLI_STORE_TTL_MINUTES)", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      ttl: ttlFromEnv({
        AGENTCLI_THREAD_TTL_MINUTES: "30",
        AGENTCLI_STORE_TTL_MINUTES: "60",
        AGENTCLI_STORE_TTL_REFRESH_ON_READ: "false",
      }),
    });
  });
  after(async () => {
    await t?.close();
  });

  test("threads and items without their own ttl expire after the default; their own ttl wins", async () => {
    const sql = sqlOf(t.server.storage);
    const plain = await t.client.threads.create();
    const own = await t.client.threads.create({ ttl: 120 });
    await age(sql, "threads", 31, "thread_id = ANY($1)", [[plain.thread_id, own.thread_id]]);
    await t.client.store.putItem(["d"], "plain", { v: 1 });
    await t.client.store.putItem(["d"], "never", { v: 1 }, { ttl: null });
    await t.client.store.putItem(["d"], "long", { v: 1 }, { ttl: 600 });
    await age(sql, "store_items", 61, "namespace = $1", [["d"]]);
    await t.client.store.getItem(["d"], "plain"); // AGENTCLI_STORE_TTL_REFRESH_ON_READ=false: no refresh
    const swept = await t.server.sweepExpired();
    assert.deepEqual(swept, { threads: [plain.thread_id], items: 1, streams: 0 });
    assert.deepEqual((await t.client.store.searchItems(["d"])).items.map((i) => i.key).sort(), ["long", "never"]);
  });

  test("settings: bad values stop the start with the variable named", () => {
    assert.deepEqual(ttlFromEnv({}), {
      threadTtlMinutes: null,
      storeTtlMinutes: null,
      refreshOnRead: true,
      sweepMs: 60_000,
      streamRetentionSeconds: 300,
      traceRetentionSeconds: 604_800,
    });
    assert.equal(ttlFromEnv({ AGENTCLI_TTL_SWEEP_SECONDS: "5" }).sweepMs, 5000);
    assert.equal(ttlFromEnv({ AGENTCLI_STREAM_RETENTION_SECONDS: "0" }).streamRetentionSeconds, 0);
    assert.equal(ttlFromEnv({ AGENTCLI_STREAM_RETENTION_SECONDS: " 120 " }).streamRetentionSeconds, 120);
    for (const bad of ["-1", "1.5", "soon"]) {
      assert.throws(
        () => ttlFromEnv({ AGENTCLI_STREAM_RETENTION_SECONDS: bad }),
        new RegExp(`AGENTCLI_STREAM_RETENTION_SECONDS="${bad}" is not a whole number from 0 to 31536000`),
      );
    }
    assert.equal(ttlFromEnv({ AGENTCLI_TRACE_RETENTION_SECONDS: "0" }).traceRetentionSeconds, 0);
    assert.throws(
      () => ttlFromEnv({ AGENTCLI_TRACE_RETENTION_SECONDS: "a week" }),
      /AGENTCLI_TRACE_RETENTION_SECONDS="a week" is not a whole number from 0 to 315360000/,
    );
    assert.throws(
      () => ttlFromEnv({ AGENTCLI_THREAD_TTL_MINUTES: "-3" }),
      /AGENTCLI_THREAD_TTL_MINUTES="-3" is not a number of minutes/,
    );
    assert.throws(
      () => ttlFromEnv({ AGENTCLI_STORE_TTL_REFRESH_ON_READ: "sometimes" }),
      /AGENTCLI_STORE_TTL_REFRESH_ON_READ/,
    );
    assert.throws(() => ttlFromEnv({ AGENTCLI_TTL_SWEEP_SECONDS: "0" }), /AGENTCLI_TTL_SWEEP_SECONDS="0"/);
  });
});

describe("TTL sweeps of two servers on one PostgreSQL", () => {
  let pg: Awaited<ReturnType<typeof pgSchema>>;
  let a: TestServer;
  let b: TestServer;
  const deleted: string[] = [];
  before(async () => {
    pg = await pgSchema("agentcli_ttl");
    a = await startTestServer({ storage: { url: pg.url }, onThreadDeleted: async (id) => void deleted.push(id) });
    b = await startTestServer({ storage: { url: pg.url }, onThreadDeleted: async (id) => void deleted.push(id) });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await pg?.drop();
  });

  test("each expired thread is deleted, and its sandbox cleaned up, once", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push((await a.client.threads.create({ ttl: 1 })).thread_id);
    await age(sqlOf(a.server.storage), "threads", 2, "true", []);
    const [x, y] = await Promise.all([a.server.sweepExpired(), b.server.sweepExpired()]);
    assert.deepEqual([...x.threads, ...y.threads].sort(), [...ids].sort());
    assert.deepEqual([...deleted].sort(), [...ids].sort());
  });

  test("ended runs' stream logs past their retention go, whichever replica sweeps", async () => {
    const runs: string[] = [];
    for (const t of [a, b]) {
      const th = await t.client.threads.create();
      const run = await t.client.runs.create(th.thread_id, "echo", { input: INPUT });
      await t.client.runs.join(th.thread_id, run.run_id);
      runs.push(run.run_id);
    }
    const sql = sqlOf(a.server.storage);
    const logged = async () =>
      Number(
        (await sql.query<{ n: string }>(
          "SELECT (SELECT count(*) FROM run_events WHERE run_id = ANY($1)) + (SELECT count(*) FROM run_event_batches WHERE run_id = ANY($1)) AS n",
          [runs],
        )).rows[0]!.n,
      );
    assert.ok(await logged() > 0);
    // Both runs ended 10 minutes ago: past the default retention (300 s).
    await sql.query("UPDATE runs SET updated_at = now() - interval '10 minutes' WHERE run_id = ANY($1)", [runs]);
    const [x, y] = await Promise.all([a.server.sweepExpired(), b.server.sweepExpired()]);
    assert.ok(x.streams + y.streams >= 2);
    assert.equal(await logged(), 0);
  });
});
