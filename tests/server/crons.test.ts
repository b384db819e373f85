/**
 * Crons through the LangGraph SDK (`client.crons.*`): create (stateless and on a thread),
 * search, count, update, delete, validation; firings made due by moving `next_run_date`
 * into the past (the schedule itself is minutes apart), which the scheduler then fires:
 * one run per firing, the thread deleted after a stateless run unless kept, `end_time`
 * honoured, one catch-up firing after a restart, and one run per firing with two servers
 * on one PostgreSQL.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@langchain/langgraph-sdk";
import type { SqlExecutor } from "../../core/storage/sql.ts";
import { encryptionFromEnv } from "../../core/storage/encryption.ts";
import { openSql } from "../../core/storage/sql.ts";
import { pgSchema, startTestServer, type TestServer, until } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const INPUT = { messages: [{ role: "user", content: "tick" }] };

/** Makes a cron's next firing due now (as if its time had come). */
async function makeDue(sql: SqlExecutor, cronId: string, ago = "1 second"): Promise<void> {
  await sql.query(`UPDATE crons SET next_run_date = now() - interval '${ago}' WHERE cron_id = $1`, [cronId]);
}

async function runsOf(
  sql: SqlExecutor,
  cronId: string,
): Promise<Array<{ run_id: string; thread_id: string; status: string }>> {
  const { rows } = await sql.query<{ run_id: string; thread_id: string; status: string }>(
    "SELECT run_id, thread_id, status FROM runs WHERE metadata->>'cron_id' = $1 ORDER BY seq",
    [cronId],
  );
  return rows;
}

describe("crons", () => {
  let t: TestServer;
  let client: Client;
  const deleted: string[] = [];
  before(async () => {
    t = await startTestServer({ cronPollMs: 50, onThreadDeleted: async (id) => void deleted.push(id) });
    client = t.client;
  });
  after(async () => {
    await t?.close();
  });

  test("/info reports crons, /openapi.json describes them", async () => {
    const info = await (await fetch(`${t.url}/info`)).json() as { flags: { crons: boolean } };
    assert.equal(info.flags.crons, true);
    const doc = await (await fetch(`${t.url}/openapi.json`)).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    for (
      const [p, m] of [
        ["/runs/crons", "post"],
        ["/threads/{thread_id}/runs/crons", "post"],
        ["/runs/crons/search", "post"],
        ["/runs/crons/count", "post"],
        ["/runs/crons/{cron_id}", "patch"],
        ["/runs/crons/{cron_id}", "delete"],
      ]
    ) {
      assert.ok(doc.paths[p!]?.[m!], `${m} ${p}`);
    }
  });

  test("create, search, count, update and delete; the schedule is read in its timezone", async () => {
    const cron = await client.crons.create("echo", {
      schedule: "30 9 * * 1-5",
      timezone: "America/New_York",
      input: INPUT,
      metadata: { team: "a" },
    });
    assert.equal(cron.schedule, "30 9 * * 1-5");
    assert.equal(cron.thread_id, null);
    assert.equal((cron as { on_run_completed?: string }).on_run_completed, "delete");
    assert.deepEqual((cron.payload as { input: unknown }).input, INPUT);
    const next = new Date(cron.next_run_date);
    assert.ok(next.getTime() > Date.now());
    const local = new Intl.DateTimeFormat("en-US", {
      timeZone: "America/New_York",
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short",
      hourCycle: "h23",
    }).format(next);
    assert.match(local, /^(Mon|Tue|Wed|Thu|Fri) 09:30$/);

    const th = await client.threads.create();
    const onThread = await client.crons.createForThread(th.thread_id, "echo", {
      schedule: "0 0 1 1 *",
      input: INPUT,
      metadata: { team: "b" },
    });
    assert.equal(onThread.thread_id, th.thread_id);
    assert.equal(new Date(onThread.next_run_date).getUTCMonth(), 0);

    const found = await client.crons.search({ metadata: { team: "a" } });
    assert.deepEqual(found.map((c) => c.cron_id), [cron.cron_id]);
    assert.deepEqual(await client.crons.search({ threadId: th.thread_id, select: ["cron_id", "schedule"] }), [{
      cron_id: onThread.cron_id,
      schedule: "0 0 1 1 *",
    }]);
    assert.equal(await client.crons.count({ threadId: th.thread_id }), 1);
    assert.ok(await client.crons.count() >= 2);

    const updated = await client.crons.update(cron.cron_id, {
      schedule: "15 * * * *",
      enabled: false,
      endTime: "2999-01-01T00:00:00Z",
      metadata: { more: 1 },
    });
    assert.equal(updated.schedule, "15 * * * *");
    assert.equal(updated.enabled, false);
    assert.equal(new Date(updated.next_run_date!).getUTCMinutes(), 15);
    assert.equal(updated.end_time && new Date(updated.end_time).getUTCFullYear(), 2999);
    assert.deepEqual(updated.metadata, { team: "a", more: 1 });
    assert.equal((await client.crons.search({ enabled: false })).some((c) => c.cron_id === cron.cron_id), true);
    assert.equal((await client.crons.update(cron.cron_id, { endTime: null })).end_time, null);

    await client.crons.delete(cron.cron_id);
    await assert.rejects(client.crons.delete(cron.cron_id), /404/);
    // Deleting the thread deletes its crons.
    await client.threads.delete(th.thread_id);
    assert.equal(await client.crons.count({ threadId: th.thread_id }), 0);
  });

  test("invalid values are 422 with a message; unknown targets are 404", async () => {
    const bad = async (body: Record<string, unknown>, re: RegExp, path = "/runs/crons") => {
      const res = await fetch(`${t.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "echo", ...body }),
      });
      const text = await res.text();
      return { status: res.status, ok: re.test((JSON.parse(text) as { detail: string }).detail), text };
    };
    for (
      const [body, re] of [
        [{ schedule: "not a cron" }, /Invalid cron schedule "not a cron": it has 3 fields/],
        [{ schedule: "* * * * * *" }, /it has 6 fields; a schedule has five/],
        [{ schedule: "61 * * * *" }, /Invalid cron schedule "61 \* \* \* \*"/],
        [{ schedule: "* * * * *", timezone: "Mars/Olympus" }, /Invalid timezone "Mars\/Olympus"/],
        [{ schedule: "* * * * *", end_time: "2001-01-01T00:00:00Z" }, /end_time .* is in the past/],
        [{ schedule: "* * * * *", end_time: "tomorrow" }, /end_time: must be an ISO 8601 date-time/],
        [{ schedule: "* * * * *", on_run_completed: "later" }, /on_run_completed/],
        [{ schedule: "* * * * *", interrupt_before: ["nope"] }, /interrupt_before names "nope"/],
      ] as const
    ) {
      const r = await bad(body, re);
      assert.equal(r.status, 422, r.text);
      assert.ok(r.ok, r.text);
    }
    assert.equal(
      (await bad({ schedule: "* * * * *", assistant_id: "nobody" }, /Assistant "nobody" not found/)).status,
      404,
    );
    assert.equal(
      (await bad({ schedule: "* * * * *" }, /Thread "missing" not found/, "/threads/missing/runs/crons")).status,
      404,
    );
    const cron = await client.crons.create("echo", { schedule: "0 * * * *", input: INPUT });
    await assert.rejects(client.crons.update(cron.cron_id, { schedule: "0 25 * * *" }), /422/);
    await assert.rejects(client.crons.update("no-such-cron", { enabled: false }), /404/);
    await client.crons.delete(cron.cron_id);
  });

  test("a thread cron fires a run on its thread; the next firing moves on", async () => {
    const th = await client.threads.create();
    const cron = await client.crons.createForThread(th.thread_id, "echo", { schedule: "0 0 1 1 *", input: INPUT });
    await makeDue(sqlOf(t.server.storage), cron.cron_id);
    const run = await until(
      "the firing's run",
      async () => (await runsOf(sqlOf(t.server.storage), cron.cron_id)).find((r) => r.status === "success"),
    );
    assert.equal(run.thread_id, th.thread_id);
    const state = await client.threads.getState<{ messages: Array<{ content: string }> }>(th.thread_id);
    assert.equal(state.values.messages.at(-1)!.content, "echo: tick");
    const [after] = await client.crons.search({ threadId: th.thread_id });
    assert.ok(new Date(after!.next_run_date!).getTime() > Date.now());
    assert.equal((await runsOf(sqlOf(t.server.storage), cron.cron_id)).length, 1);
  });

  test("a stateless cron runs on a new thread, deleted after the run (on_run_completed) unless kept", async () => {
    const gone = await client.crons.create("echo", { schedule: "0 0 1 1 *", input: INPUT });
    const seen = deleted.length;
    await makeDue(sqlOf(t.server.storage), gone.cron_id);
    const threadId = await until("the thread's deletion", async () => deleted[seen]);
    await assert.rejects(client.threads.get(threadId), /404/);
    assert.equal((await runsOf(sqlOf(t.server.storage), gone.cron_id)).length, 0);

    const kept = await client.crons.create("echo", { schedule: "0 0 1 1 *", input: INPUT, onRunCompleted: "keep" });
    await makeDue(sqlOf(t.server.storage), kept.cron_id);
    const run = await until(
      "the kept run",
      async () => (await runsOf(sqlOf(t.server.storage), kept.cron_id)).find((r) => r.status === "success"),
    );
    const thread = await client.threads.get(run.thread_id);
    assert.equal(thread.metadata?.cron_id, kept.cron_id);
    assert.equal((thread.values as { messages: unknown[] }).messages.length, 2);
    assert.ok(!deleted.includes(run.thread_id));
  });

  test("past end_time: the due firing is skipped and the cron has no next run", async () => {
    const th = await client.threads.create();
    const cron = await client.crons.createForThread(th.thread_id, "echo", {
      schedule: "0 0 1 1 *",
      input: INPUT,
      endTime: "2999-01-01T00:00:00Z",
    });
    await sqlOf(t.server.storage).query(
      "UPDATE crons SET end_time = now() - interval '1 minute', next_run_date = now() - interval '1 second' WHERE cron_id = $1",
      [cron.cron_id],
    );
    await until(
      "the cron's end",
      async () => (await client.crons.search({ threadId: th.thread_id }))[0]?.next_run_date === null,
    );
    assert.equal((await runsOf(sqlOf(t.server.storage), cron.cron_id)).length, 0);
  });
});

describe("crons with encryption at rest", () => {
  test("the payload and sealed metadata keys are not stored in plaintext; firings still run it", async () => {
    const encryption = encryptionFromEnv({
      LANGGRAPH_AES_KEY: "0123456789abcdef0123456789abcdef",
      LANGGRAPH_AES_JSON_KEYS: "note",
    });
    const t = await startTestServer({ cronPollMs: 50, storage: { encryption } });
    try {
      const secret = `CRONSECRET${crypto.randomUUID().slice(0, 8)}`;
      const th = await t.client.threads.create();
      const cron = await t.client.crons.createForThread(th.thread_id, "echo", {
        schedule: "0 0 1 1 *",
        input: { messages: [{ role: "user", content: secret }] },
        metadata: { note: secret },
      });
      assert.equal(cron.metadata?.note, secret);
      const { rows } = await sqlOf(t.server.storage).query<{ row: string }>(
        "SELECT row_to_json(c)::text AS row FROM crons c",
      );
      assert.equal(rows.length, 1);
      assert.ok(!rows[0]!.row.includes(secret), rows[0]!.row);
      assert.deepEqual(((await t.client.crons.search())[0]!.payload as { input: unknown }).input, {
        messages: [{ role: "user", content: secret }],
      });
      await assert.rejects(t.client.crons.search({ metadata: { note: secret } }), /422/);
      await makeDue(sqlOf(t.server.storage), cron.cron_id);
      await until(
        "the firing",
        async () => (await runsOf(sqlOf(t.server.storage), cron.cron_id)).find((r) => r.status === "success"),
      );
      const state = await t.client.threads.getState<{ messages: Array<{ content: string }> }>(th.thread_id);
      assert.equal(state.values.messages.at(-1)!.content, `echo: ${secret}`);
    } finally {
      await t.close();
    }
  });
});

describe("crons across restarts", () => {
  test("firings missed while down fire once when the server is back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentcli-crons-"));
    try {
      let t = await startTestServer({ storage: { dataDir: join(dir, "db") }, cronPollMs: 50 });
      const th = await t.client.threads.create();
      const cron = await t.client.crons.createForThread(th.thread_id, "echo", {
        schedule: "*/5 * * * *",
        input: INPUT,
      });
      await t.close();
      // Down for three hours: 36 firings missed.
      const sql = await openSql({ dataDir: join(dir, "db") });
      await makeDue(sql, cron.cron_id, "3 hours");
      await sql.close();
      t = await startTestServer({ storage: { dataDir: join(dir, "db") }, cronPollMs: 50 });
      try {
        await until(
          "the catch-up run",
          async () => (await runsOf(sqlOf(t.server.storage), cron.cron_id)).find((r) => r.status === "success"),
        );
        const [c] = await t.client.crons.search({ threadId: th.thread_id });
        const next = new Date(c!.next_run_date!);
        assert.ok(next.getTime() > Date.now() && next.getUTCMinutes() % 5 === 0);
        assert.equal((await runsOf(sqlOf(t.server.storage), cron.cron_id)).length, 1);
      } finally {
        await t.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("crons with two servers on one PostgreSQL", () => {
  let pg: Awaited<ReturnType<typeof pgSchema>>;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    pg = await pgSchema("agentcli_crons");
    a = await startTestServer({ storage: { url: pg.url }, cronPollMs: 20 });
    b = await startTestServer({ storage: { url: pg.url }, cronPollMs: 20 });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await pg?.drop();
  });

  test("each firing runs exactly once", async () => {
    const crons = [];
    for (let i = 0; i < 8; i++) {
      crons.push(
        await (i % 2 ? a : b).client.crons.create("echo", {
          schedule: "0 0 1 1 *",
          input: INPUT,
          onRunCompleted: "keep",
        }),
      );
    }
    for (const round of [1, 2]) {
      await sqlOf(a.server.storage).query("UPDATE crons SET next_run_date = now() - interval '1 second'");
      for (const c of crons) {
        await until(
          `firing ${round} of ${c.cron_id}`,
          async () =>
            (await runsOf(sqlOf(a.server.storage), c.cron_id)).filter((r) => r.status === "success").length >= round,
        );
      }
      // Both schedulers have had many looks at the table since: no second run of a firing.
      const before = Date.now();
      await until(
        "both schedulers to poll again",
        async () => Date.now() - before > 200 && (await a.server.storage.crons.nextDue())! > 0,
      );
      for (const c of crons) {
        assert.equal(
          (await runsOf(sqlOf(b.server.storage), c.cron_id)).length,
          round,
          `cron ${c.cron_id} after firing ${round}`,
        );
      }
    }
  });
});
