/**
 * Remembered assistant lookups on a shared database (core/storage/assistants.ts
 * `resolveHint`): a replica creating a run on an existing thread uses the assistant it looked
 * up last without a query, and the statement that creates the run checks it is current; an
 * assistant changed on another replica is never used stale.
 */
import assert from "node:assert/strict";
import { after, before, mock, test } from "node:test";
import { pgSchema, startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

let a: TestServer;
let b: TestServer;
let db: Awaited<ReturnType<typeof pgSchema>>;
before(async () => {
  db = await pgSchema("agentcli_hints");
  a = await startTestServer({ storage: { url: db.url }, workers: 2 });
  b = await startTestServer({ storage: { url: db.url }, workers: 2 });
});
after(async () => {
  await b?.close();
  await a?.close();
  await db?.drop();
});

/** Statements `server` sends that look an assistant up on their own. */
function lookups(server: TestServer): { count: () => number; restore: () => void } {
  const sql = sqlOf(server.server.storage);
  let n = 0;
  const original = sql.query.bind(sql) as (...args: unknown[]) => unknown;
  const m = mock.method(sql, "query", (text: string, ...rest: unknown[]) => {
    if (/^SELECT \*(, xmin::text AS row_version)? FROM assistants WHERE \(assistant_id = \$1 OR/.test(text)) n++;
    return original(text, ...rest);
  });
  return { count: () => n, restore: () => m.mock.restore() };
}

test("a run on an existing thread uses the assistant looked up before, with no lookup of its own; one changed on another replica is looked up again, never used stale", async () => {
  const assistant = await a.client.assistants.create({ graphId: "echo", config: { configurable: { v: 1 } } });
  const input = { messages: [{ role: "user", content: "x" }] };
  const t1 = await b.client.threads.create();
  await b.client.runs.wait(t1.thread_id, assistant.assistant_id, { input });

  const spy = lookups(b);
  try {
    const t2 = await b.client.threads.create();
    await b.client.runs.wait(t2.thread_id, assistant.assistant_id, { input });
    assert.equal(spy.count(), 0, "the remembered lookup was used");

    // Changed on a, acknowledged: b's next run must use the new graph, not the one it remembers.
    await a.client.assistants.update(assistant.assistant_id, { graphId: "slow" });
    const t3 = await b.client.threads.create();
    const out = (await b.client.runs.wait(t3.thread_id, assistant.assistant_id, { input: { ms: 10 } })) as Record<
      string,
      unknown
    >;
    assert.equal(out.steps, 1, `ran the graph the assistant has now ("slow"), not "echo": ${JSON.stringify(out)}`);
    assert.equal((await b.client.threads.get(t3.thread_id)).metadata?.graph_id, "slow");
    assert.equal(spy.count(), 1, "looked up again once it was found not current");
    const t5 = await b.client.threads.create();
    await b.client.runs.wait(t5.thread_id, assistant.assistant_id, { input: { ms: 10 } });
    assert.equal(spy.count(), 1, "and remembered again");

    // Deleted on a: b answers 404, not a run of the assistant it remembers.
    await a.client.assistants.delete(assistant.assistant_id);
    const t4 = await b.client.threads.create();
    await assert.rejects(b.client.runs.create(t4.thread_id, assistant.assistant_id, { input }), /404|not found/i);
  } finally {
    spy.restore();
  }
});
