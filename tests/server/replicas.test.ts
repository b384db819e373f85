/**
 * Two server replicas on one PostgreSQL schema (`AGENTCLI_TEST_DATABASE_URL`), signalling
 * over Redis (`AGENTCLI_TEST_REDIS_URL`) or, without it, over PostgreSQL LISTEN/NOTIFY: a
 * run created on one is joined, streamed and cancelled from the other. Replica b has no
 * workers, so every run executes on a.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { collect, pgSchema, startTestServer, type TestServer } from "./_harness.ts";

const REDIS_URL = process.env.AGENTCLI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

for (const mode of ["redis", "postgres"] as const) {
  describe(`two replicas, signals over ${mode}`, () => {
    const redisUrl = mode === "redis" ? REDIS_URL : undefined;
    let a: TestServer;
    let b: TestServer;
    let db: Awaited<ReturnType<typeof pgSchema>>;
    before(async () => {
      db = await pgSchema(`agentcli_replicas_${mode}`);
      a = await startTestServer({ storage: { url: db.url }, redisUrl, workers: 4 });
      b = await startTestServer({ storage: { url: db.url }, redisUrl, workers: 0 });
    });
    after(async () => {
      await b?.close();
      await a?.close();
      await db?.drop();
    });

    test("a run started through one replica is streamed, joined and cancelled through another", async () => {
      const th = await b.client.threads.create();
      const events = await collect(
        b.client.runs.stream(th.thread_id, "echo", {
          input: { messages: [{ role: "user", content: "x" }] },
          streamMode: ["values"],
        }),
      );
      assert.equal(events[0]!.event, "metadata");
      assert.ok(events.some((e) => e.event === "values"));
      const out =
        (await b.client.runs.wait(th.thread_id, "echo", { input: { messages: [{ role: "user", content: "y" }] } })) as {
          messages: unknown[];
        };
      assert.equal(out.messages.length, 4);
      const run = await b.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, streamMode: "custom" });
      for await (const e of b.client.runs.joinStream(th.thread_id, run.run_id)) if (e.event === "custom") break;
      // Cancelled through b, honoured on a (which runs it): `wait` returns once it has ended.
      await b.client.runs.cancel(th.thread_id, run.run_id, true);
      assert.equal((await a.client.runs.get(th.thread_id, run.run_id)).status, "interrupted");
      assert.equal((await b.client.threads.get(th.thread_id)).status, "idle");
    });

    test("a token stream followed on the other replica, live then after its log was compacted", async () => {
      type Part = { event: string; data: unknown; id?: string };
      type Msg = { id: string; content: string };
      const text = "a reply long enough to stream in many chunks over the bus";
      const th = await b.client.threads.create();
      const modes = ["values", "messages-tuple"] as const;
      const live = await collect(
        b.client.runs.stream(th.thread_id, "echo", {
          input: { messages: [{ role: "user", content: text }] },
          streamMode: [...modes],
        }),
      ) as Part[];
      const final = live.filter((p) => p.event === "values").at(-1)!.data as { messages: Msg[] };
      const reply = final.messages.at(-1)!;
      const said = (parts: Part[]) =>
        parts.filter((p) => p.event === "messages").map((p) => (p.data as [Msg])[0]).filter((m) => m.id === reply.id)
          .map((m) => m.content).join("");
      // Live (or, should the run end first, from the compacted log): each token once.
      assert.equal(said(live), `echo: ${text}`);
      const runId = (live[0]!.data as { run_id: string }).run_id;
      const replay = await collect(b.client.runs.joinStream(th.thread_id, runId, { streamMode: [...modes] })) as Part[];
      assert.deepEqual(replay.filter((p) => p.event === "messages").length, 1, "one event for the whole reply");
      assert.equal(said(replay), `echo: ${text}`);
      assert.deepEqual(replay.at(-1)!.data, final);
    });

    test("a run created on the replica without workers is woken on the other at once", async () => {
      const th = await b.client.threads.create();
      const run = await b.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, streamMode: "custom" });
      const events = [];
      for await (const e of b.client.runs.joinStream(th.thread_id, run.run_id)) {
        events.push(e.event);
        if (e.event === "custom") break;
      }
      assert.deepEqual(events.slice(0, 1), ["metadata"]);
      await a.client.runs.cancel(th.thread_id, run.run_id, true);
      assert.equal((await b.client.runs.get(th.thread_id, run.run_id)).status, "interrupted");
    });
  });
}
