/**
 * Two `serve`-like replica processes on one PostgreSQL schema, signalling over Redis and,
 * without it, over PostgreSQL LISTEN/NOTIFY (real processes, the LangGraph SDK client): a run
 * is joined and cancelled through the replica that does not run it; the replica running a run
 * is SIGKILLed mid-run and the other takes the run over once its lease expires, resumes it
 * from its last checkpoint and streams it to the end; a run out of attempts ends `error`
 * with an `error` event on its stream.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { openSql, type SqlDriver } from "../../core/storage/sql.ts";
import { spawnServer, stopProcess } from "./_harness.ts";

const PG_URL = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.AGENTCLI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const CHILD = new URL("./_replica-child.ts", import.meta.url).pathname;

interface Replica {
  proc: ChildProcess;
  client: Client;
}

const startReplica = (url: string, redis: string | undefined): Promise<Replica> =>
  spawnServer(CHILD, [url, redis ?? "-", "2", "1"]);
const stop = stopProcess;

for (const mode of ["redis", "postgres"] as const) {
  describe(`two replica processes, signals over ${mode}`, () => {
    const schema = `agentcli_failover_${mode}_${process.pid}_${Date.now()}`;
    const url = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    let admin: SqlDriver;
    let replicas: Replica[] = [];

    before(async () => {
      admin = await openSql({ url: PG_URL, poolSize: 2 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      const redis = mode === "redis" ? REDIS_URL : undefined;
      // One after the other: the first creates the schema's tables.
      replicas.push(await startReplica(url, redis));
      replicas.push(await startReplica(url, redis));
    });
    after(async () => {
      await Promise.all(replicas.map((r) => stop(r.proc, "SIGKILL")));
      await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin?.close();
    });

    /** The replica whose process holds a run's lease, and the other one. */
    async function holderOf(runId: string): Promise<{ holder: Replica; other: Replica }> {
      for (;;) {
        const { rows } = await admin.query<{ h: string | null }>(
          `SELECT lease_holder AS h FROM ${schema}.runs WHERE run_id = $1`,
          [runId],
        );
        const pid = Number(rows[0]?.h?.split(":")[1]);
        const holder = replicas.find((r) => r.proc.pid === pid);
        if (holder) return { holder, other: replicas.find((r) => r !== holder)! };
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    test("a run is joined and cancelled through the replica that does not run it", async () => {
      const c = replicas[0]!.client;
      const th = await c.threads.create();
      const run = await c.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, streamMode: "custom" });
      const { holder, other } = await holderOf(run.run_id);
      const seen: string[] = [];
      for await (const e of other.client.runs.joinStream(th.thread_id, run.run_id)) {
        seen.push(e.event);
        if (e.event === "custom") break;
      }
      assert.equal(seen[0], "metadata");
      await other.client.runs.cancel(th.thread_id, run.run_id, true);
      assert.equal((await holder.client.runs.get(th.thread_id, run.run_id)).status, "interrupted");
      assert.equal((await other.client.threads.get(th.thread_id)).status, "idle");
    });

    test("SIGKILL of the replica running a run: the other resumes it from its checkpoint, its stream goes on", async () => {
      const c = replicas[0]!.client;
      const th = await c.threads.create();
      const run = await c.runs.create(th.thread_id, "steps", { input: { ms: 1500 }, streamMode: ["custom", "values"] });
      const { holder, other } = await holderOf(run.run_id);
      const events: Array<{ event: string; data: any }> = [];
      let killed: Promise<void> | null = null;
      for await (
        const e of other.client.runs.joinStream(th.thread_id, run.run_id, { streamMode: ["custom", "values"] })
      ) {
        events.push(e as { event: string; data: any });
        if (e.event === "custom" && !killed) killed = stop(holder.proc, "SIGKILL");
      }
      await killed;
      replicas = replicas.filter((r) => r !== holder);
      const names = events.map((e) => e.event);
      assert.ok(!names.includes("error"), `no error event: ${names.join(", ")}`);
      const resumed = events.filter((e) => e.event === "metadata" && e.data?.resumed === true);
      assert.equal(
        resumed.length,
        1,
        `the stream says the run resumed: ${JSON.stringify(events.map((e) => [e.event, e.data?.tick ?? e.data]))}`,
      );
      const last = events.filter((e) => e.event === "values").at(-1)!;
      // Resumed from the checkpoint after `first`: not started over.
      assert.deepEqual(last.data.log, ["first", "second"]);
      const done = await other.client.runs.get(th.thread_id, run.run_id);
      assert.equal(done.status, "success");
      assert.equal(done.metadata?.resumed, true);
      assert.equal((await other.client.threads.get(th.thread_id)).status, "idle");
      assert.deepEqual(((await other.client.threads.getState(th.thread_id)).values as { log: string[] }).log, [
        "first",
        "second",
      ]);
      // The thread takes new runs on the survivor.
      const next = (await other.client.runs.wait(th.thread_id, "steps", { input: { ms: 1 } })) as { log: string[] };
      assert.deepEqual(next.log, ["first", "second", "first", "second"]);
    });

    test("a run out of attempts is not resumed: it ends `error` and its stream gets an `error` event", async () => {
      const survivor = replicas[0]!;
      const th = await survivor.client.threads.create();
      const [slow] = await survivor.client.assistants.search({ graphId: "slow" });
      const runId = crypto.randomUUID();
      // As a replica that died on its third attempt left it: running, its lease expired.
      await admin.query(
        `INSERT INTO ${schema}.runs (run_id, thread_id, assistant_id, metadata, kwargs, status, attempt, lease_until, lease_holder)
         VALUES ($1, $2, $3, '{}', '{"input":{"ms":60000}}', 'running', $4, now() - interval '1 second', 'gone:1:x:1')`,
        [runId, th.thread_id, slow!.assistant_id, 3],
      );
      await admin.query(
        `INSERT INTO ${schema}.run_events (run_id, seq, event, data) VALUES ($1, 1, 'metadata', '{}')`,
        [runId],
      );
      const events: Array<{ event: string; data: any }> = [];
      for await (const e of survivor.client.runs.joinStream(th.thread_id, runId)) {
        events.push(e as { event: string; data: any });
      }
      assert.deepEqual(events.map((e) => e.event), ["metadata", "metadata", "error"]);
      assert.equal(events[2]!.data.error, "RunLost");
      assert.equal((await survivor.client.runs.get(th.thread_id, runId)).status, "error");
    });
  });
}
