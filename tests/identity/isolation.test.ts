/**
 * The isolation matrix: two users of an identity_b deployment, through `@langchain/langgraph-sdk`.
 * No read, list, search, count, stream, join, cancel, update or delete of threads, runs or
 * store items crosses users: another user's resource is a 404, searches see one's own only,
 * and the run config carries the authenticated user, whatever the client sends.
 *
 * Run: npx node --test tests/identity/isolation.test.ts
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Client } from "@langchain/langgraph-sdk";
import { type JwksServer, startJwksServer } from "../fixtures/identity-servers/jwks.ts";
import { type AuthedServer, startAuthedServer, statusOf } from "./_agent-server.ts";

const ALICE = "user_alice";
const BOB = "user_bob";
const hi = { messages: [{ role: "user", content: "hi" }] };

describe("isolation between two users (identity_b)", () => {
  let idp: JwksServer;
  let srv: AuthedServer;
  let alice: Client;
  let bob: Client;
  let aliceThread: string;
  let alicePendingThread: string;
  let alicePendingRun: string;
  let aliceDoneRun: string;

  before(async () => {
    idp = await startJwksServer();
    srv = await startAuthedServer({
      provider: "identity_b",
      env: { IDENTITY_B_SECRET_KEY: idp.secretKey, IDENTITY_B_JWKS_URL: idp.jwksUrl },
    });
    const tokenFor = async (sub: string) => idp.sign(sub, { exp: Math.floor(Date.now() / 1000) + 3600 });
    const aliceHeaders = { authorization: `Bearer ${await tokenFor(ALICE)}` };
    const bobHeaders = { authorization: `Bearer ${await tokenFor(BOB)}` };
    alice = srv.client(aliceHeaders);
    bob = srv.client(bobHeaders);
    headersOf.set(alice, { url: srv.url, headers: aliceHeaders });
    headersOf.set(bob, { url: srv.url, headers: bobHeaders });
    const t = await alice.threads.create({ metadata: { topic: "secret plans", owner: BOB } });
    aliceThread = t.thread_id;
    const done = await alice.runs.create(aliceThread, "echo", { input: hi });
    await finished(alice, aliceThread, done.run_id);
    aliceDoneRun = done.run_id;
    alicePendingThread = (await alice.threads.create()).thread_id;
    alicePendingRun =
      (await alice.runs.create(alicePendingThread, "slow", { input: { ms: 60_000 }, afterSeconds: 3600 })).run_id;
    await alice.store.putItem(["notes"], "diary", { text: "alice's secret" });
  });
  after(async () => {
    await srv?.close();
    await idp?.close();
  });

  it("stamps the owner from the token, never from the client", async () => {
    const t = await alice.threads.get(aliceThread);
    assert.equal(t.metadata?.owner, ALICE);
    const patched = await alice.threads.update(aliceThread, { metadata: { owner: BOB, topic: "secret plans" } });
    assert.equal(patched.metadata?.owner, ALICE);
  });

  it("injects the authenticated user into config.configurable, overriding the client's", async () => {
    const t = await alice.threads.create();
    const seen: unknown[] = [];
    for await (
      const ev of alice.runs.stream(t.thread_id, "echo", {
        input: hi,
        streamMode: "custom",
        config: { configurable: { graph_auth_user_id: BOB, langgraph_auth_user_id: BOB } },
      })
    ) if (ev.event === "custom") seen.push((ev.data as { user?: unknown }).user);
    assert.deepEqual(seen, [ALICE]);
  });

  it("threads: another user's thread is 404 for get, update, delete, copy, state, history, stream", async () => {
    assert.equal(await statusOf(bob.threads.get(aliceThread)), 404);
    assert.equal(await statusOf(bob.threads.update(aliceThread, { metadata: { hacked: true } })), 404);
    assert.equal(await statusOf(bob.threads.copy(aliceThread)), 404);
    assert.equal(await statusOf(bob.threads.getState(aliceThread)), 404);
    assert.equal(await statusOf(bob.threads.updateState(aliceThread, { values: { messages: [] } })), 404);
    assert.equal(await statusOf(bob.threads.getHistory(aliceThread)), 404);
    assert.equal(await statusOf(bob.threads.delete(aliceThread)), 404);
    assert.equal(await statusOf(fetchAs(bob, `/threads/${aliceThread}/stream`)), 404);
    const pruned = await bob.threads.prune([aliceThread]) as { pruned_count?: number };
    assert.equal(pruned.pruned_count, 0);
    const t = await alice.threads.get(aliceThread);
    assert.equal(t.metadata?.hacked, undefined);
  });

  it("threads: search and count see only one's own", async () => {
    const bobThread = (await bob.threads.create({ metadata: { topic: "bob" } })).thread_id;
    const ids = (await bob.threads.search({ limit: 100 })).map((t) => t.thread_id);
    assert.deepEqual(ids, [bobThread]);
    assert.deepEqual(await bob.threads.search({ metadata: { owner: ALICE } }), []);
    assert.deepEqual(await bob.threads.search({ metadata: { topic: "secret plans" } }), []);
    assert.deepEqual(await bob.threads.search({ ids: [aliceThread] }), []);
    assert.equal(await bob.threads.count({}), 1);
    assert.equal(await bob.threads.count({ metadata: { owner: ALICE } }), 0);
    assert.ok((await alice.threads.count({})) >= 2);
  });

  it("threads: creating with another user's thread id does not take it over", async () => {
    const status = await statusOf(bob.threads.create({ threadId: aliceThread, ifExists: "do_nothing" }));
    assert.notEqual(status, 200);
    assert.equal((await alice.threads.get(aliceThread)).metadata?.owner, ALICE);
  });

  it("runs: another user's run is 404 for get, list, join, join stream, cancel, delete", async () => {
    for (const [thread, run] of [[aliceThread, aliceDoneRun], [alicePendingThread, alicePendingRun]] as const) {
      assert.equal(await statusOf(bob.runs.get(thread, run)), 404);
      assert.equal(await statusOf(bob.runs.list(thread)), 404);
      assert.equal(await statusOf(bob.runs.join(thread, run)), 404);
      // As LangGraph's server, a join stream opens and carries the error; nothing of alice's run.
      const joined = [];
      for await (const e of bob.runs.joinStream(thread, run)) joined.push(e);
      assert.deepEqual(joined.map((e) => e.event), ["error"]);
      assert.match(JSON.stringify(joined[0]!.data), /404: Thread not found/);
      const raw = await textAs(bob, `/runs/${run}/stream`);
      assert.match(raw, /^id: 0\nevent: error\ndata: .*404: Run not found/);
      assert.doesNotMatch(raw, /event: (values|metadata)/);
      assert.equal(await statusOf(bob.runs.cancel(thread, run)), 404);
      assert.equal(await statusOf(bob.runs.delete(thread, run)), 404);
    }
    assert.equal(await statusOf(bob.runs.cancelMany({ runIds: [alicePendingRun] })), 404);
    assert.equal(await statusOf(bob.runs.cancelMany({ threadId: alicePendingThread })), 404);
    await bob.runs.cancelMany({ status: "pending" });
    assert.equal((await alice.runs.get(alicePendingThread, alicePendingRun)).status, "pending");
  });

  it("runs: nobody can start a run on another user's thread", async () => {
    assert.equal(await statusOf(bob.runs.create(aliceThread, "echo", { input: hi })), 404);
    assert.equal(await statusOf(bob.runs.wait(aliceThread, "echo", { input: hi })), 404);
    assert.equal(await statusOf(bob.runs.stream(aliceThread, "echo", { input: hi })), 404);
    // Creating it instead: the id is taken (the same 409 as for one's own thread id), nothing more.
    assert.equal(await statusOf(bob.runs.create(aliceThread, "echo", { input: hi, ifNotExists: "create" })), 409);
    assert.equal((await alice.runs.list(aliceThread)).length, 1);
  });

  it("store: another user's items are invisible and untouchable", async () => {
    // A missing item is null (200), as the SDK expects; alice's is missing for bob.
    assert.equal(await bob.store.getItem(["notes"], "diary"), null);
    assert.equal(await bob.store.getItem([ALICE, "notes"], "diary"), null);
    assert.deepEqual((await bob.store.searchItems(["notes"])).items, []);
    assert.deepEqual((await bob.store.searchItems([])).items, []);
    assert.deepEqual((await bob.store.searchItems([ALICE])).items, []);
    assert.deepEqual((await bob.store.listNamespaces()).namespaces, []);
    await bob.store.deleteItem(["notes"], "diary");
    await bob.store.putItem(["notes"], "diary", { text: "bob's" });
    const mine = await alice.store.getItem(["notes"], "diary");
    assert.deepEqual(mine?.value, { text: "alice's secret" });
    assert.deepEqual(mine?.namespace, ["notes"]);
    assert.deepEqual((await alice.store.searchItems(["notes"])).items.map((i) => i.value), [{
      text: "alice's secret",
    }]);
    assert.deepEqual((await alice.store.listNamespaces()).namespaces, [["notes"]]);
    assert.deepEqual((await bob.store.getItem(["notes"], "diary"))?.value, { text: "bob's" });
  });

  it("assistants: another user's assistant can be neither run nor seen; delete_threads touches only one's own threads", async () => {
    const a = await alice.assistants.create({ graphId: "echo", name: "alice's own" });
    const bobThread = (await bob.threads.create()).thread_id;
    assert.equal(await statusOf(bob.runs.create(bobThread, a.assistant_id, { input: hi })), 404);
    assert.equal(await statusOf(bob.assistants.get(a.assistant_id)), 404);
    assert.equal(
      (await bob.assistants.search({ graphId: "echo" })).some((x) => x.assistant_id === a.assistant_id),
      false,
    );
    const run = await bob.runs.create(bobThread, "echo", { input: hi });
    await finished(bob, bobThread, run.run_id);
    await alice.assistants.delete(a.assistant_id, { deleteThreads: true });
    assert.equal(
      (await bob.threads.get(bobThread)).thread_id,
      bobThread,
      "bob's thread must survive alice's delete_threads",
    );
  });
});

/** Waits for a run to end by polling its status (the join endpoint is tested elsewhere). */
async function finished(client: Client, thread: string, run: string): Promise<void> {
  for (;;) {
    const r = await client.runs.get(thread, run);
    if (!["pending", "running"].includes(r.status)) return;
    await new Promise((res) => setTimeout(res, 25));
  }
}

const headersOf = new WeakMap<Client, { url: string; headers: Record<string, string> }>();

function textAs(client: Client, path: string): Promise<string> {
  const c = headersOf.get(client)!;
  return fetch(`${c.url}${path}`, { headers: c.headers }).then((res) => res.text());
}

function fetchAs(client: Client, path: string): Promise<unknown> {
  const c = headersOf.get(client)!;
  return fetch(`${c.url}${path}`, { headers: c.headers }).then(async (res) => {
    await res.body?.cancel();
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
  });
}
