/**
 * A run reads its thread's checkpoint by key: the values of other threads are never scanned.
 * The read's join once let the planner's generic plan hash all of `checkpoint_blobs` (PGlite
 * never analyzes), so on the embedded engine every run read every thread's values twice and a
 * run's cost grew with the runs the database held (bench/README.md). A LangChain agent with a
 * tool (two model calls, a tool call) against the scripted model server, run on new threads.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { sqlOf } from "../../core/storage/storage.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { lookupAgent } from "./_lookup-agent.ts";
import { startTestServer } from "./_harness.ts";

test("runs on many threads never scan checkpoint_blobs (embedded engine)", async (t) => {
  // PGlite counts a statement's scans in the view at once; PostgreSQL reports them later.
  if (process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1") {
    return t.skip("pg_stat_user_tables is read at once on PGlite");
  }
  const models = await startModelServer();
  const graph = lookupAgent(models.openaiBaseUrl);
  const s = await startTestServer({ graphs: { agent: async () => graph } });
  try {
    for (let i = 0; i < 30; i++) {
      models.script({ toolCalls: [{ name: "lookup", args: { q: `q${i}` } }] }, { text: `done ${i}` });
      const thread = await s.client.threads.create();
      const out = await s.client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: `question ${i}` }] },
      }) as { messages: { content: unknown }[] };
      assert.equal(out.messages.at(-1)!.content, `done ${i}`);
    }
    const { rows } = await sqlOf(s.server.storage).query<{ seq_scan: string }>(
      "SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'checkpoint_blobs'",
    );
    assert.equal(Number(rows[0]!.seq_scan), 0, "no sequential scan of checkpoint_blobs");
  } finally {
    await s.close();
    await models.close();
  }
});
