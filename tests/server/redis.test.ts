/**
 * Two server replicas on one PostgreSQL with Redis (`AGENTCLI_TEST_DATABASE_URL`,
 * `AGENTCLI_TEST_REDIS_URL`): a run created on one is joined, streamed and cancelled
 * from the other.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { openSql } from "../../core/storage/sql.ts";
import { collect, startTestServer, type TestServer } from "./_harness.ts";

const PG_URL = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.AGENTCLI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const schema = `agentcli_redis_${process.pid}_${Date.now()}`;
const url = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;

let a: TestServer;
let b: TestServer;
before(async () => {
  const admin = await openSql({ url: PG_URL });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  a = await startTestServer({ storage: { url }, redisUrl: REDIS_URL, workers: 4 });
  b = await startTestServer({ storage: { url }, redisUrl: REDIS_URL, workers: 0 });
});
after(async () => {
  await b?.close();
  await a?.close();
  const admin = await openSql({ url: PG_URL });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
});

test("a run started through one replica is streamed, joined and cancelled through another", async () => {
  const th = await b.client.threads.create();
  const events = await collect(b.client.runs.stream(th.thread_id, "echo", { input: { messages: [{ role: "user", content: "x" }] }, streamMode: ["values"] }));
  assert.equal(events[0]!.event, "metadata");
  assert.ok(events.some((e) => e.event === "values"));
  const out = (await b.client.runs.wait(th.thread_id, "echo", { input: { messages: [{ role: "user", content: "y" }] } })) as { messages: unknown[] };
  assert.equal(out.messages.length, 4);
  const run = await b.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, streamMode: "custom" });
  for await (const e of b.client.runs.joinStream(th.thread_id, run.run_id)) if (e.event === "custom") break;
  await b.client.runs.cancel(th.thread_id, run.run_id, true);
  assert.equal((await a.client.runs.get(th.thread_id, run.run_id)).status, "interrupted");
});
