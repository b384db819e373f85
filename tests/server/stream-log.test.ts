/**
 * The stream log of ended runs (issue 33), through the SDK, on the suite's engine: compacted
 * at the run's end (one event per streamed message, the last `values` only) and replayed as
 * such by a server that did not run it (the same database after a restart), from the start or
 * from inside a message; deleted `AGENTCLI_STREAM_RETENTION_SECONDS` after the run ended by the
 * TTL sweeper (polled until the rows are gone, no clock asserted), never while the run is in
 * flight, at once when the run is gone; joining an expired stream ends cleanly and the run's
 * status and output stay readable.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentServerOptions } from "../../core/server/app.ts";
import { sqlOf } from "../../core/storage/storage.ts";
import { collect, pgSchema, startTestServer, type TestServer, until } from "./_harness.ts";

const TEXT = "the quick brown fox jumps over the lazy dog";
const INPUT = { messages: [{ role: "user", content: TEXT }] };
const MODES = ["values", "messages-tuple", "updates", "custom"] as const;

interface Row {
  seq: number;
  event: string;
  data: string;
}

/** The run's events in the log (its batches and single rows), each at its id. */
async function rowsOf(t: TestServer, runId: string): Promise<Row[]> {
  return (await t.server.storage.events.read(runId)).map((e) => ({ seq: e.id, event: e.event, data: e.data }));
}

/** The rows the run's log takes, in both tables. */
async function tableRows(t: TestServer, runId: string): Promise<number> {
  const { rows } = await sqlOf(t.server.storage).query<{ n: string }>(
    `SELECT (SELECT count(*) FROM run_events WHERE run_id = $1) + (SELECT count(*) FROM run_event_batches WHERE run_id = $1) AS n`,
    [runId],
  );
  return Number(rows[0]!.n);
}

/** Storage two servers use one after the other: a data folder, or a PostgreSQL schema. */
async function lastingStorage(): Promise<{ storage: AgentServerOptions["storage"]; drop(): Promise<void> }> {
  if (process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1") {
    const s = await pgSchema("agentcli_streamlog");
    return { storage: { url: s.url }, drop: s.drop };
  }
  const dir = mkdtempSync(join(tmpdir(), "agentcli-stream-log-"));
  return { storage: { dataDir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

type Part = { event: string; data: unknown; id?: string };
type Msg = { id: string; type: string; content: unknown };

const contentOf = (p: Part) => (p.data as [Msg, unknown])[0].content;

describe("the stream log is compacted at a run's end", () => {
  let store: Awaited<ReturnType<typeof lastingStorage>>;
  let a: TestServer | undefined;
  let b: TestServer | undefined;
  before(async () => {
    store = await lastingStorage();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await store?.drop();
  });

  test("one event per streamed message, the last values; replayed as such after a restart, resumable", async () => {
    a = await startTestServer({ storage: store.storage });
    const th = await a.client.threads.create();
    const live = await collect(
      a.client.runs.stream(th.thread_id, "echo", { input: INPUT, streamMode: [...MODES] }),
    ) as Part[];
    const runId = (live[0]!.data as { run_id: string }).run_id;
    const tokens = live.filter((p) => p.event === "messages");
    const ids = new Set(tokens.map((p) => (p.data as [Msg])[0].id));
    assert.ok(tokens.length > ids.size + 5, `the reply was streamed in chunks (${tokens.length})`);
    const finalValues = live.filter((p) => p.event === "values").at(-1)!.data as { messages: Msg[] };
    const reply = finalValues.messages.at(-1)!;
    assert.equal(reply.content, `echo: ${TEXT}`);

    const rows = await rowsOf(a, runId);
    assert.ok(rows.length < live.length, `${rows.length} events kept of ${live.length}`);
    assert.equal(await tableRows(a, runId), 1, "the compacted log is one batch");
    const liveIds = new Set(live.map((p) => Number(p.id) + 1));
    for (const r of rows) assert.ok(liveIds.has(r.seq), `row ${r.seq} keeps its event's id`);
    const messageRows = rows.filter((r) => r.event === "messages");
    assert.equal(messageRows.length, ids.size, "one event per message");
    const folded = messageRows.map((r) => JSON.parse(r.data)[0] as Msg).find((m) => m.id === reply.id)!;
    assert.equal(folded.content, reply.content, "the folded message is the whole reply");
    const valueRows = rows.filter((r) => r.event === "values");
    assert.equal(valueRows.length, 1);
    assert.deepEqual(JSON.parse(valueRows[0]!.data), finalValues);
    assert.equal(rows.filter((r) => r.event === "custom").length, 1);
    assert.equal(rows.filter((r) => r.event === "updates").length, live.filter((p) => p.event === "updates").length);

    // Another server on the same database (this one's memory gone) replays the log.
    await a.close();
    a = undefined;
    b = await startTestServer({ storage: store.storage });
    const replay = await collect(b.client.runs.joinStream(th.thread_id, runId, { streamMode: [...MODES] })) as Part[];
    assert.deepEqual(replay.map((p) => [Number(p.id) + 1, p.event]), rows.map((r) => [r.seq, r.event]));
    assert.deepEqual(replay.filter((p) => p.event === "values").at(-1)!.data, finalValues);

    // From inside the reply: the reply again, whole, at its last chunk's id; then the final values.
    const mine = tokens.filter((p) => (p.data as [Msg])[0].id === reply.id);
    const inside = mine[Math.floor(mine.length / 2)]!;
    const resumed = await collect(
      b.client.runs.joinStream(th.thread_id, runId, { streamMode: [...MODES], lastEventId: inside.id }),
    ) as Part[];
    const again = resumed.filter((p) => p.event === "messages");
    assert.deepEqual(again.map((p) => p.id), [mine.at(-1)!.id]);
    assert.equal(contentOf(again[0]!), reply.content);
    assert.deepEqual(resumed.filter((p) => p.event === "values").at(-1)!.data, finalValues);
    assert.ok(!resumed.some((p) => p.event === "error"));

    // From the final values on: what came after them only, and the stream ends.
    const lastValues = live.filter((p) => p.event === "values").at(-1)!;
    const tail = await collect(
      b.client.runs.joinStream(th.thread_id, runId, { streamMode: [...MODES], lastEventId: lastValues.id }),
    ) as Part[];
    assert.deepEqual(
      tail.map((p) => p.id),
      live.filter((p) => Number(p.id) > Number(lastValues.id) && liveIds.has(Number(p.id) + 1)).map((p) => p.id)
        .filter((id) => rows.some((r) => r.seq === Number(id) + 1)),
    );
  });
});

describe("the stream log expires", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ ttl: { streamRetentionSeconds: 0, sweepMs: 1000 } });
  });
  after(async () => {
    await t?.close();
  });

  test("an ended run's log is deleted by the sweeper; joining it then ends cleanly, its status and output stay", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "echo", { input: INPUT });
    const out = await t.client.runs.join(th.thread_id, run.run_id) as { messages: Msg[] };
    assert.equal(out.messages.at(-1)!.content, `echo: ${TEXT}`);
    await until("the log deleted", async () => (await rowsOf(t, run.run_id)).length === 0);

    const joined = await collect(t.client.runs.joinStream(th.thread_id, run.run_id)) as Part[];
    assert.ok(!joined.some((p) => p.event === "error"), JSON.stringify(joined));
    assert.equal((await t.client.runs.get(th.thread_id, run.run_id)).status, "success");
    const again = await t.client.runs.join(th.thread_id, run.run_id) as { messages: Msg[] };
    assert.equal(again.messages.at(-1)!.content, `echo: ${TEXT}`);
  });

  test("a run in flight keeps its log through sweeps", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, streamMode: ["custom"] });
    await until(
      "the run running",
      async () => (await t.client.runs.get(th.thread_id, run.run_id)).status === "running",
    );
    await until("ticks logged", async () => (await rowsOf(t, run.run_id)).length > 2);
    await t.server.sweepExpired();
    const rows = await rowsOf(t, run.run_id);
    assert.equal(rows[0]!.event, "metadata");
    assert.ok(rows.length > 2);
    await t.client.runs.cancel(th.thread_id, run.run_id, true);
    await until("the cancelled run's log deleted", async () => (await rowsOf(t, run.run_id)).length === 0);
  });
});

describe("the stream log of a run that is gone", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ ttl: { streamRetentionSeconds: 3600 } });
  });
  after(async () => {
    await t?.close();
  });

  test("goes at the next sweep; a log within its retention stays", async () => {
    const gone = await t.client.threads.create();
    const kept = await t.client.threads.create();
    const r1 = await t.client.runs.wait(gone.thread_id, "echo", { input: INPUT }).then(() =>
      t.client.runs.list(gone.thread_id)
    );
    await t.client.runs.wait(kept.thread_id, "echo", { input: INPUT });
    const [r2] = await t.client.runs.list(kept.thread_id);
    assert.ok((await rowsOf(t, r1[0]!.run_id)).length > 0);
    await t.client.threads.delete(gone.thread_id);
    const swept = await t.server.sweepExpired();
    assert.ok(swept.streams >= 1);
    assert.equal((await rowsOf(t, r1[0]!.run_id)).length, 0);
    assert.ok((await rowsOf(t, r2!.run_id)).length > 0);
  });
});
