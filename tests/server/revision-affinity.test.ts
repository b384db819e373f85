/**
 * Revision affinity of the run queue (issue 37): two servers of different revisions on one
 * PostgreSQL schema share its queue. A run records the revision of the server that created
 * it and executes on a worker of that revision while the revision has a live one; another
 * revision's worker takes it only when none is left (the revision stopped, or its workers'
 * marks of life expired because they died). Each server's `agent` graph answers with its
 * revision's name, so the answer tells which revision executed a run.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { openStorage, sqlOf, type Storage } from "../../core/storage/storage.ts";
import { FIXTURES, pgSchema, startTestServer, type TestServer, until } from "./_harness.ts";

/** A graph that answers "<revision>: <last message>", as a revision's own instructions or model would differ. */
function revisionGraph(revision: string) {
  return new StateGraph(MessagesAnnotation).addNode("respond", (s: typeof MessagesAnnotation.State) => ({
    messages: [new AIMessage(`${revision}: ${String(s.messages.at(-1)?.content ?? "")}`)],
  })).addEdge("__start__", "respond").compile();
}

function startRevision(url: string, revision: string, workers: number): Promise<TestServer> {
  return startTestServer({
    storage: { url, revision },
    graphs: { ...FIXTURES, agent: async () => revisionGraph(revision) },
    workers,
    queueAffinitySeconds: 0, // no hold for the creating replica: only the revision keeps a run
  });
}

const input = (text: string) => ({ messages: [{ role: "user", content: text }] });

/** The answer of a run's thread (its last message), once the run has ended. */
async function answer(s: TestServer, threadId: string, runId: string): Promise<string> {
  const out = (await s.client.runs.join(threadId, runId)) as { messages: Array<{ content: string }> };
  return out.messages.at(-1)!.content;
}

async function holderOf(s: TestServer, runId: string): Promise<string | null> {
  const { rows } = await sqlOf(s.server.storage).query<{ lease_holder: string | null }>(
    "SELECT lease_holder FROM runs WHERE run_id = $1",
    [runId],
  );
  return rows[0]?.lease_holder ?? null;
}

describe("revision affinity of the queue", () => {
  let db: Awaited<ReturnType<typeof pgSchema>>;
  let r1: TestServer;
  let r2: TestServer;
  let r1Closed = false;
  before(async () => {
    db = await pgSchema("agentcli_revisions");
    r1 = await startRevision(db.url, "rev-1", 1);
    r2 = await startRevision(db.url, "rev-2", 4);
  });
  after(async () => {
    await r2?.close();
    if (!r1Closed) await r1?.close();
    await db?.drop();
  });

  test("runs queued on revision 1 execute on revision 1's worker only, though revision 2 has free workers", async () => {
    const busyThread = await r1.client.threads.create();
    const busy = await r1.client.runs.create(busyThread.thread_id, "slow", { input: { ms: 60_000 } });
    assert.equal(busy.status, "running", "revision 1's only worker runs it");
    const threads = await Promise.all([1, 2, 3].map(() => r1.client.threads.create()));
    const queued = [];
    for (const [i, t] of threads.entries()) {
      const run = await r1.client.runs.create(t.thread_id, "agent", { input: input(`turn ${i}`) });
      assert.equal(run.status, "pending", "queued: revision 1 is full");
      queued.push(run);
    }
    // A second turn on the first thread, queued behind its first.
    const second = await r1.client.runs.create(threads[0]!.thread_id, "agent", { input: input("again") });
    // Revision 2 hears of the runs (created, broadcast) and has free workers, but leaves them.
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, run] of queued.entries()) {
      assert.equal((await r2.client.runs.get(threads[i]!.thread_id, run.run_id)).status, "pending");
    }
    await r1.client.runs.cancel(busyThread.thread_id, busy.run_id);
    for (const [i, run] of queued.entries()) {
      assert.equal(await answer(r1, threads[i]!.thread_id, run.run_id), `rev-1: turn ${i}`);
      assert.equal(await holderOf(r1, run.run_id), r1.server.storage.runs.holder);
    }
    assert.equal(await answer(r1, threads[0]!.thread_id, second.run_id), "rev-1: again");
  });

  test("runs created on revision 2 execute on revision 2", async () => {
    const t = await r2.client.threads.create();
    const out = (await r2.client.runs.wait(t.thread_id, "agent", { input: input("hi") })) as {
      messages: Array<{ content: string }>;
    };
    assert.equal(out.messages.at(-1)!.content, "rev-2: hi");
  });

  test("when revision 1 stops, its queued runs are executed by revision 2", async () => {
    const busyThread = await r1.client.threads.create();
    const busy = await r1.client.runs.create(busyThread.thread_id, "slow", { input: { ms: 60_000 } });
    const threads = await Promise.all([1, 2].map(() => r1.client.threads.create()));
    const queued = [];
    for (const t of threads) queued.push(await r1.client.runs.create(t.thread_id, "agent", { input: input("left") }));
    assert.deepEqual(queued.map((r) => r.status), ["pending", "pending"]);
    r1Closed = true;
    await r1.close(); // grace 200 ms: the slow run is handed back, revision 1 has no worker left
    for (const [i, run] of queued.entries()) {
      assert.equal(await answer(r2, threads[i]!.thread_id, run.run_id), "rev-2: left");
      assert.equal(await holderOf(r2, run.run_id), r2.server.storage.runs.holder);
    }
    // The run it was executing is taken over (resumed) by revision 2 too.
    await until(
      "the slow run taken over",
      async () => (await holderOf(r2, busy.run_id)) === r2.server.storage.runs.holder,
    );
    await r2.client.runs.cancel(busyThread.thread_id, busy.run_id);
  });
});

describe("revision affinity in the claim", () => {
  let db: Awaited<ReturnType<typeof pgSchema>>;
  let one: Storage;
  let two: Storage;
  let none: Storage;
  before(async () => {
    db = await pgSchema("agentcli_revision_claim");
    one = await openStorage({ url: db.url, revision: "rev-1" });
    two = await openStorage({ url: db.url, revision: "rev-2" });
    none = await openStorage({ url: db.url });
  });
  after(async () => {
    await Promise.all([one?.close(), two?.close(), none?.close()]);
    await db?.drop();
  });

  async function queue(s: Storage): Promise<string> {
    const thread_id = randomUUID();
    await s.threads.create({ thread_id, metadata: {} });
    const run = await s.runs.insert({
      run_id: randomUUID(),
      thread_id,
      assistant_id: "agent",
      metadata: {},
      kwargs: {},
      multitask_strategy: null,
    });
    return run.run_id;
  }

  test("another revision's run is claimed only once that revision's workers are gone or their marks expired", async () => {
    await one.runs.beat();
    const id = await queue(one);
    assert.equal(await two.runs.claim(id), null, "revision 1 has a live worker");
    assert.equal(await none.runs.claim(id), null, "a server with no revision leaves it too");
    // Revision 1's worker died: its mark of life expires (no one renews it).
    await sqlOf(one).query("UPDATE revision_workers SET until = now() - interval '1 second' WHERE revision = 'rev-1'");
    assert.equal((await two.runs.claim(id))?.run_id, id);

    await one.runs.beat();
    const again = await queue(one);
    assert.equal(await two.runs.claim(again), null);
    await one.runs.beat(true); // stopped
    assert.equal((await two.runs.claim(again))?.run_id, again);
  });

  test("a run with no revision is claimed by any worker, and a worker claims its own revision's runs", async () => {
    await one.runs.beat();
    await two.runs.beat();
    const plain = await queue(none);
    assert.equal((await two.runs.claim(plain))?.run_id, plain);
    const own = await queue(two);
    assert.equal(await one.runs.claim(own), null);
    assert.equal((await two.runs.claim(own))?.run_id, own);
  });
});
