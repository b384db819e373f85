/**
 * Whatever fails while a run's end is recorded, its thread does not stay `busy` with no run in
 * flight, at runtime or after a restart on the same data, and reading its state never answers
 * 500: a graph whose state cannot be read back (a node wrote a message its reducer refuses),
 * one whose state storage refuses (an unpaired surrogate), and a thread an older server left `busy`
 * with no run in flight (freed `error`, `interrupted` when its state waits on an interrupt, or `idle`).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { FIXTURES, pgSchema, startTestServer, type TestServer } from "./_harness.ts";
import { sqlOf } from "../../core/storage/storage.ts";

const GRAPHS = {
  ...FIXTURES,
  unreadable: async () => (await import("../fixtures/graphs/unreadable-write.ts")).graph,
  unstorable: async () => (await import("../fixtures/graphs/unstorable.ts")).graph,
};

const ON_POSTGRES = process.env.AGENTCLI_TEST_SERVER_ON_POSTGRES === "1";

/** `GET /threads/{id}/state`: its status and body (never a 500). */
async function readState(t: TestServer, threadId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${t.url}/threads/${threadId}/state`);
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

describe("a run whose end cannot be recorded as usual", () => {
  let dir: string;
  let schema: { url: string; drop(): Promise<void> } | null = null;
  let t: TestServer;
  const start = () => startTestServer({ graphs: GRAPHS, storage: schema ? { url: schema.url } : { dataDir: dir } });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "agentcli-run-end-"));
    if (ON_POSTGRES) schema = await pgSchema("agentcli_run_end");
    t = await start();
  });
  after(async () => {
    await t.close();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const threads: Record<string, string> = {};

  test("a state that cannot be read back: the run ends error, the thread error, /state a 409 that says why", async () => {
    const thread = await t.client.threads.create();
    threads.unreadable = thread.thread_id;
    await assert.rejects(
      t.client.runs.wait(thread.thread_id, "unreadable", { input: { messages: [{ role: "user", content: "hi" }] } }),
      /Unable to coerce message/,
    );
    const [run] = await t.client.runs.list(thread.thread_id);
    assert.equal(run!.status, "error");
    assert.equal((await t.client.threads.get(thread.thread_id)).status, "error");
    const state = await readState(t, thread.thread_id);
    assert.equal(state.status, 409, JSON.stringify(state.body));
    assert.match(
      String(state.body.detail),
      /^Cannot read the state of thread "[^"]+": its checkpoint holds a write the graph cannot apply \(Unable to coerce message/,
    );
    assert.doesNotMatch(JSON.stringify(state.body), /\n\s+at |node_modules|Troubleshooting URL/);
    // A new run goes on from the last complete checkpoint, and the state reads again.
    const out = (await t.client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ role: "user", content: "again" }] },
    })) as { messages: Array<{ content: string }> };
    assert.equal(out.messages.at(-1)!.content, "echo: again");
    assert.equal((await readState(t, thread.thread_id)).status, 200);
    assert.equal((await t.client.threads.get(thread.thread_id)).status, "idle");
  });

  test("a state storage refuses: the run ends error with a short message, the thread error, /state answers", async () => {
    const thread = await t.client.threads.create();
    threads.unstorable = thread.thread_id;
    await assert.rejects(
      t.client.runs.wait(thread.thread_id, "unstorable", { input: { messages: [{ role: "user", content: "hi" }] } }),
      (err: Error) => {
        assert.doesNotMatch(err.message, /\n\s+at |node_modules/);
        return true;
      },
    );
    const [run] = await t.client.runs.list(thread.thread_id);
    assert.equal(run!.status, "error");
    const after = await t.client.threads.get(thread.thread_id);
    assert.equal(after.status, "error");
    const state = await readState(t, thread.thread_id);
    assert.notEqual(state.status, 500, JSON.stringify(state.body));
    assert.equal((after.error as Record<string, unknown> | undefined)?.error, "RunNotRecorded");
    // The thread takes runs again (each ends the same way: its state still holds the surrogate).
    await assert.rejects(
      t.client.runs.wait(thread.thread_id, "unstorable", { input: null }),
      /RunNotRecorded|could not record/,
    );
    assert.equal((await t.client.runs.list(thread.thread_id)).length, 2);
    assert.equal((await t.client.threads.get(thread.thread_id)).status, "error");
  });

  test("after a restart on the same data: no thread busy with no run, and one an older server left busy is freed", async () => {
    const stranded = await t.client.threads.create();
    const failed = await t.client.threads.create();
    const waiting = await t.client.threads.create();
    await t.client.runs.wait(stranded.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] } });
    await assert.rejects(
      t.client.runs.wait(failed.thread_id, "unreadable", { input: { messages: [{ role: "user", content: "hi" }] } }),
    );
    await t.client.runs.wait(waiting.thread_id, "interrupt", { input: { question: "go on?" } });
    assert.equal((await t.client.threads.get(waiting.thread_id)).status, "interrupted");
    // As the server before this fix left them: `busy`, their runs ended.
    await sqlOf(t.server.storage).query("UPDATE threads SET status = 'busy' WHERE thread_id = ANY($1::text[])", [[
      stranded.thread_id,
      failed.thread_id,
      waiting.thread_id,
    ]]);
    assert.equal((await t.client.threads.get(stranded.thread_id)).status, "busy");
    await t.close();
    t = await start();
    assert.equal((await t.client.threads.get(stranded.thread_id)).status, "idle", "its last run succeeded");
    assert.equal((await t.client.threads.get(failed.thread_id)).status, "error", "its last run failed");
    assert.equal(
      (await t.client.threads.get(waiting.thread_id)).status,
      "interrupted",
      "its state waits on an interrupt: freed interrupted, not idle",
    );
    assert.equal((await t.client.threads.get(threads.unreadable!)).status, "idle");
    assert.equal((await t.client.threads.get(threads.unstorable!)).status, "error");
    for (const id of [stranded.thread_id, failed.thread_id, threads.unreadable!, threads.unstorable!]) {
      assert.notEqual((await readState(t, id)).status, 500, id);
    }
    const out = (await t.client.runs.wait(stranded.thread_id, "echo", {
      input: { messages: [{ role: "user", content: "back" }] },
    })) as { messages: Array<{ content: string }> };
    assert.equal(out.messages.at(-1)!.content, "echo: back");
    // The freed thread resumes where its interrupt stopped it.
    const resumed = (await t.client.runs.wait(waiting.thread_id, "interrupt", { command: { resume: "yes" } })) as {
      log: string[];
    };
    assert.deepEqual(resumed.log, ["asked", "done:yes"]);
    assert.equal((await t.client.threads.get(waiting.thread_id)).status, "idle");
  });
});
