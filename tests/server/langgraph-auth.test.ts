/**
 * LangGraph custom auth (`langgraphAuth`, `auth.path` of `langgraph.json`) with the SDK's own
 * `Auth` (tests/fixtures/auth/langgraph-auth.ts): `authenticate` on every request (401 with
 * the handler's message), `on` handlers that rewrite metadata on create, filter reads and
 * searches (another user's threads and assistants are 404 and never listed), refuse (403) by
 * scope, and the store's namespace rule; the user reaches the graph as LangGraph's server
 * gives it; an export that is not an `Auth` stops the server at start.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { startTestServer, type TestServer } from "./_harness.ts";

const MODULE = fileURLToPath(new URL("../fixtures/auth/langgraph-auth.ts", import.meta.url));

let t: TestServer;
const client = (token?: string) =>
  new Client({
    apiUrl: t.url,
    apiKey: null,
    defaultHeaders: token ? { Authorization: `Bearer ${token}` } : {},
    callerOptions: { maxRetries: 0 },
  });
let alice: Client;
let bob: Client;
let reader: Client;

before(async () => {
  t = await startTestServer({ langgraphAuth: { module: MODULE, exportName: "auth" } });
  alice = client("token-alice");
  bob = client("token-bob");
  reader = client("token-reader");
});
after(async () => {
  await t?.close();
});

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

describe("LangGraph custom auth", () => {
  test("authenticate runs on every request; public paths stay public", async () => {
    const none = await fetch(`${t.url}/threads/search`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    assert.equal(none.status, 401);
    assert.match(await none.text(), /Missing bearer token/);
    assert.equal(await status(client("nope").threads.search()), 401);
    assert.equal((await fetch(`${t.url}/ok`)).status, 200);
    assert.equal((await fetch(`${t.url}/info`)).status, 200);
  });

  test("threads: metadata rewritten on create, filtered on read, search and count", async () => {
    const mine = await alice.threads.create({ metadata: { topic: "a", owner: "mallory" } });
    assert.equal(mine.metadata?.owner, "alice");
    const theirs = await bob.threads.create({ metadata: { topic: "b" } });
    assert.equal(theirs.metadata?.owner, "bob");
    assert.equal((await alice.threads.get(mine.thread_id)).thread_id, mine.thread_id);
    assert.equal(await status(alice.threads.get(theirs.thread_id)), 404);
    assert.equal(await status(alice.threads.getState(theirs.thread_id)), 404);
    assert.equal(await status(alice.threads.update(theirs.thread_id, { metadata: { x: 1 } })), 404);
    assert.equal(await status(alice.threads.delete(theirs.thread_id)), 404);
    const listed = (await alice.threads.search({ limit: 100 })).map((x) => x.thread_id);
    assert.ok(listed.includes(mine.thread_id));
    assert.ok(!listed.includes(theirs.thread_id));
    assert.equal(await alice.threads.count({}), listed.length);
    // A user without the scope is refused with the handler's message.
    const refused = await status(reader.threads.create({}));
    assert.equal(refused, 403);
    assert.equal((await bob.threads.get(theirs.thread_id)).metadata?.owner, "bob");
  });

  test("runs: on the caller's thread, metadata rewritten, the user reaches the graph", async () => {
    const th = await alice.threads.create();
    const run = await alice.runs.create(th.thread_id, "echo", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    assert.equal(run.metadata?.run_by, "alice");
    await alice.runs.join(th.thread_id, run.run_id);
    assert.equal((await alice.runs.get(th.thread_id, run.run_id)).status, "success");
    assert.equal(await status(bob.runs.create(th.thread_id, "echo", { input: { messages: [] } })), 404);
    assert.equal(await status(bob.runs.list(th.thread_id)), 404);
  });

  test("assistants: scoped permission to create, owner filter on read and search", async () => {
    const a = await alice.assistants.create({ graphId: "echo", name: "alice's", metadata: { owner: "mallory" } });
    assert.equal(a.metadata?.owner, "alice");
    assert.equal(await status(bob.assistants.create({ graphId: "echo" })), 403);
    assert.equal(await status(bob.assistants.get(a.assistant_id)), 404);
    assert.equal((await alice.assistants.get(a.assistant_id)).assistant_id, a.assistant_id);
    const bobSees = await bob.assistants.search({ limit: 100 });
    assert.ok(!bobSees.some((x) => x.assistant_id === a.assistant_id));
    const aliceSees = await alice.assistants.search({ limit: 100 });
    assert.deepEqual(aliceSees.map((x) => x.assistant_id), [a.assistant_id]);
    assert.equal(await alice.assistants.count({}), 1);
  });

  test("store: the handler's namespace rule and its own status", async () => {
    await alice.store.putItem(["alice", "notes"], "k", { v: 1 });
    assert.deepEqual((await alice.store.getItem(["alice", "notes"], "k"))?.value, { v: 1 });
    assert.equal(await status(bob.store.putItem(["alice", "notes"], "k", { v: 2 })), 404);
    assert.equal(await status(bob.store.getItem(["alice", "notes"], "k")), 404);
    assert.deepEqual((await alice.store.getItem(["alice", "notes"], "k"))?.value, { v: 1 });
  });

  test("without the Studio bypass (serve, or disable_studio_auth), a Studio-marked request is authenticated", async () => {
    const res = await fetch(`${t.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-auth-scheme": "langsmith" },
      body: "{}",
    });
    assert.equal(res.status, 401);
  });

  test("an export that is not an Auth instance stops the server at start", async () => {
    await assert.rejects(
      startTestServer({ langgraphAuth: { module: MODULE, exportName: "notAuth" } }),
      /LangGraph auth ".*langgraph-auth\.ts:notAuth" is a object, not an Auth instance/,
    );
    await assert.rejects(
      startTestServer({ langgraphAuth: { module: MODULE, exportName: "missing" } }),
      /exports no "missing"/,
    );
  });
});
