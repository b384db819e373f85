/**
 * Scoping hooks: with an authenticate function, threads, runs and store items belong to
 * their owner; another user's resources are 404; clients cannot set `metadata.owner` nor the
 * auth keys of `configurable`; the user reaches the graph as `graph_auth_user_id`; a thrown
 * 401 refuses the request; store namespaces are confined under the user's id (and read back
 * as written); streams never carry the auth user object.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { userError } from "../../core/kernel/errors.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
let alice: Client;
let bob: Client;
before(async () => {
  t = await startTestServer({
    authenticate: async (req) => {
      const auth = req.headers.get("authorization");
      if (!auth) throw userError("UNAUTHORIZED", { message: "Cannot authenticate the request: no bearer token" });
      const name = auth.replace(/^Bearer /, "");
      return { identity: name, isAuthenticated: true };
    },
  });
  const make = (name: string) =>
    new Client({
      apiUrl: t.url,
      apiKey: null,
      defaultHeaders: { Authorization: `Bearer ${name}` },
      callerOptions: { maxRetries: 0 },
    });
  alice = make("alice");
  bob = make("bob");
});
after(async () => {
  await t?.close();
});

describe("auth scoping", () => {
  test("unauthenticated requests are 401 with a JSON detail", async () => {
    const res = await fetch(`${t.url}/threads/search`, { method: "POST", body: "{}" });
    assert.equal(res.status, 401);
    assert.match((await res.json()).detail, /no bearer token/);
  });

  test("threads belong to their owner; owner cannot be forged or changed", async () => {
    const th = await alice.threads.create({ metadata: { owner: "bob", topic: "x" } });
    assert.equal(th.metadata?.owner, "alice");
    await assert.rejects(bob.threads.get(th.thread_id), /404/);
    await assert.rejects(bob.threads.update(th.thread_id, { metadata: { topic: "y" } }), /404/);
    await assert.rejects(bob.threads.delete(th.thread_id), /404/);
    await assert.rejects(bob.runs.create(th.thread_id, "echo", { input: { messages: [] } }), /404/);
    assert.equal((await bob.threads.search({ metadata: { topic: "x" } })).length, 0);
    assert.equal(await bob.threads.count(), 0);
    const patched = await alice.threads.update(th.thread_id, { metadata: { owner: "bob" } });
    assert.equal(patched.metadata?.owner, "alice");
    assert.equal((await alice.threads.search()).length, 1);
  });

  test("the user reaches the graph; client-supplied auth keys are stripped", async () => {
    const th = await alice.threads.create();
    const events = [];
    for await (
      const e of alice.runs.stream(th.thread_id, "echo", {
        input: { messages: [{ role: "user", content: "who" }] },
        streamMode: "custom",
        config: { configurable: { graph_auth_user_id: "mallory", langgraph_auth_user_id: "mallory" } },
      })
    ) events.push(e);
    const custom = events.find((e) => e.event === "custom")!.data as { user: string };
    assert.equal(custom.user, "alice");
    const [run] = await alice.runs.list(th.thread_id);
    assert.equal(run!.metadata?.owner, "alice");
    await assert.rejects(bob.runs.get(th.thread_id, run!.run_id), /404/);
  });

  test("store items are confined per user", async () => {
    await alice.store.putItem(["notes"], "n1", { text: "alice's" });
    await bob.store.putItem(["notes"], "n1", { text: "bob's" });
    assert.deepEqual((await alice.store.getItem(["notes"], "n1"))?.value, { text: "alice's" });
    assert.deepEqual((await bob.store.getItem(["notes"], "n1"))?.value, { text: "bob's" });
    const found = await bob.store.searchItems(["notes"]);
    assert.deepEqual(found.items.map((i) => [i.namespace, i.value]), [[["notes"], { text: "bob's" }]]);
    assert.deepEqual((await alice.store.listNamespaces()).namespaces, [["notes"]]);
    await bob.store.deleteItem(["notes"], "n1");
    assert.deepEqual((await alice.store.getItem(["notes"], "n1"))?.value, { text: "alice's" });
  });

  test("a client reads back exactly the namespaces it wrote, even one starting with its own id; a graph sees them under [identity, ...]", async () => {
    await alice.store.putItem(["alice", "x"], "k", { v: 1 });
    const item = await alice.store.getItem(["alice", "x"], "k");
    assert.deepEqual(item?.namespace, ["alice", "x"]);
    assert.ok(
      (await alice.store.listNamespaces({ prefix: ["alice"] })).namespaces.some((n) => n.join("/") === "alice/x"),
    );
    assert.equal(await alice.store.getItem(["x"], "k"), null);
    assert.deepEqual((await t.server.storage.store.get(["alice", "alice", "x"], "k"))?.value, { v: 1 });
    // What a graph writes at [identity, ...ns] the user reads at ns.
    await t.server.storage.store.put(["alice", "from-graph"], "g", { by: "graph" });
    assert.deepEqual((await alice.store.getItem(["from-graph"], "g"))?.value, { by: "graph" });
    assert.equal(await bob.store.getItem(["from-graph"], "g"), null);
  });

  test("debug checkpoint events carry no auth user object", async () => {
    const th = await alice.threads.create();
    const events = [];
    for await (
      const e of alice.runs.stream(th.thread_id, "echo", {
        input: { messages: [{ role: "user", content: "hi" }] },
        streamMode: ["debug", "tasks", "checkpoints"],
      })
    ) events.push(e);
    const text = JSON.stringify(events);
    assert.ok(events.some((e) => e.event === "debug" && (e.data as { type: string }).type === "checkpoint"));
    assert.doesNotMatch(text, /langgraph_auth_user"|langgraph_auth_permissions|isAuthenticated/);
    assert.match(text, /"graph_auth_user_id":"alice"/); // the id, as LangGraph's server shows it
  });
});
