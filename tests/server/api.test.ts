/**
 * The Agent API through `@langchain/langgraph-sdk`: assistants, threads, runs (wait,
 * background, list, get, delete, stateless, batch), store, system routes and error statuses.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { defaultAssistantId } from "../../core/server/app.ts";
import { FIXTURES, startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
before(async () => {
  t = await startTestServer({ defaultAssistants: { echo: { name: "Echo Agent", description: "echoes" } } });
});
after(async () => {
  await t?.close();
});

const hi = (content: string) => ({ messages: [{ role: "user", content }] });

describe("system routes", () => {
  test("GET /ok, /info, /openapi.json", async () => {
    assert.deepEqual(await (await fetch(`${t.url}/ok`)).json(), { ok: true });
    const info = await (await fetch(`${t.url}/info`)).json();
    assert.deepEqual(info.graphs, ["echo", "interrupt", "subgraph", "slow"]);
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    assert.equal(doc.openapi, "3.1.0");
    assert.ok(doc.paths["/threads/{thread_id}/runs/stream"].post.requestBody);
  });
});

describe("assistants", () => {
  test("default assistants: stable uuid v5 of the name, reachable by graph id", async () => {
    const a = await t.client.assistants.get(defaultAssistantId("Echo Agent"));
    assert.equal(a.name, "Echo Agent");
    assert.equal(a.graph_id, "echo");
    assert.equal((await t.client.assistants.get("echo")).assistant_id, a.assistant_id);
    assert.equal(defaultAssistantId("Echo Agent"), defaultAssistantId("Echo Agent"));
  });

  test("a graph named like another graph's default assistant still gets its own", async () => {
    const other = await startTestServer({ defaultAssistants: { echo: { name: "slow" } } });
    try {
      const slow = await other.client.assistants.search({ graphId: "slow" });
      assert.equal(slow.length, 1);
      assert.equal(slow[0]!.name, "slow graph");
      assert.equal(
        (await other.client.assistants.get("slow")).graph_id,
        "slow",
        "a graph id resolves to that graph's assistant",
      );
      assert.equal((await other.client.assistants.search({ graphId: "echo" }))[0]!.name, "slow");
    } finally {
      await other.close();
    }
  });

  test("create, search, count, patch (versions), set latest, graph, schemas, delete", async () => {
    const a = await t.client.assistants.create({
      graphId: "echo",
      name: "mine",
      metadata: { team: "x" },
      config: { configurable: { k: 1 } },
    });
    assert.equal(a.version, 1);
    const found = await t.client.assistants.search({ metadata: { team: "x" } });
    assert.deepEqual(found.map((f) => f.assistant_id), [a.assistant_id]);
    assert.equal(await t.client.assistants.count({ graphId: "echo" }), 2);
    const b = await t.client.assistants.update(a.assistant_id, { name: "renamed" });
    assert.equal(b.version, 2);
    assert.equal(b.name, "renamed");
    const versions = await t.client.assistants.getVersions(a.assistant_id);
    assert.deepEqual(versions.map((v) => v.version), [2, 1]);
    const back = await t.client.assistants.setLatest(a.assistant_id, 1);
    assert.equal(back.name, "mine");
    const graph = await t.client.assistants.getGraph(a.assistant_id);
    assert.ok(graph.nodes.some((n) => n.id === "respond"));
    const schemas = await t.client.assistants.getSchemas(a.assistant_id);
    assert.ok("messages" in ((schemas.state_schema as { properties: object }).properties));
    await assert.rejects(t.client.assistants.create({ graphId: "echo", assistantId: a.assistant_id }), /409/);
    const same = await t.client.assistants.create({
      graphId: "echo",
      assistantId: a.assistant_id,
      ifExists: "do_nothing",
    });
    assert.equal(same.assistant_id, a.assistant_id);
    await t.client.assistants.delete(a.assistant_id);
    await assert.rejects(t.client.assistants.get(a.assistant_id), /404/);
  });

  test("unknown graph is a 404, invalid body a 422", async () => {
    await assert.rejects(t.client.assistants.create({ graphId: "nope" }), /404/);
    const res = await fetch(`${t.url}/assistants`, {
      method: "POST",
      body: JSON.stringify({ graph_id: 5 }),
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 422);
    assert.match((await res.json()).detail, /graph_id/);
  });
});

describe("threads", () => {
  test("create with metadata and thread_id, if_exists, search, count, patch, copy, delete", async () => {
    const id = crypto.randomUUID();
    const th = await t.client.threads.create({ threadId: id, metadata: { topic: "t1" } });
    assert.equal(th.thread_id, id);
    assert.equal(th.status, "idle");
    await assert.rejects(t.client.threads.create({ threadId: id }), /409/);
    assert.equal((await t.client.threads.create({ threadId: id, ifExists: "do_nothing" })).thread_id, id);
    assert.deepEqual((await t.client.threads.search({ metadata: { topic: "t1" } })).map((x) => x.thread_id), [id]);
    assert.equal(await t.client.threads.count({ metadata: { topic: "t1" } }), 1);
    const patched = await t.client.threads.update(id, { metadata: { extra: true } });
    assert.deepEqual({ topic: patched.metadata?.topic, extra: patched.metadata?.extra }, { topic: "t1", extra: true });
    await t.client.runs.wait(id, "echo", { input: hi("copy me") });
    const copy = await t.client.threads.copy(id);
    assert.notEqual(copy.thread_id, id);
    const state = await t.client.threads.getState<{ messages: Array<{ content: string }> }>(copy.thread_id);
    assert.equal(state.values.messages[1]!.content, "echo: copy me");
    await t.client.threads.delete(id);
    await assert.rejects(t.client.threads.get(id), /404/);
  });

  test("state, update state, state at checkpoint, history", async () => {
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "echo", { input: hi("one") });
    await t.client.runs.wait(th.thread_id, "echo", { input: hi("two") });
    const history = await t.client.threads.getHistory(th.thread_id, { limit: 20 });
    assert.ok(history.length >= 4);
    const state = await t.client.threads.getState<{ messages: unknown[] }>(th.thread_id);
    assert.equal(state.values.messages.length, 4);
    const older = history.find((h) => (h.values as { messages?: unknown[] }).messages?.length === 2)!;
    const atCp = await t.client.threads.getState<{ messages: unknown[] }>(
      th.thread_id,
      older.checkpoint.checkpoint_id!,
    );
    assert.equal(atCp.values.messages.length, 2);
    const atCp2 = await t.client.threads.getState<{ messages: unknown[] }>(th.thread_id, older.checkpoint);
    assert.equal(atCp2.values.messages.length, 2);
    const upd = await t.client.threads.updateState(th.thread_id, {
      values: { messages: [{ role: "user", content: "added" }] },
      asNode: "respond",
    });
    // LangGraph's API answers { checkpoint }; the SDK's type says { configurable }.
    assert.ok((upd as unknown as { checkpoint: { checkpoint_id: string } }).checkpoint.checkpoint_id);
    const after = await t.client.threads.get<{ messages: Array<{ content: string }> }>(th.thread_id);
    assert.equal(after.values.messages.at(-1)!.content, "added");
  });

  test("missing thread is a 404 everywhere", async () => {
    const id = crypto.randomUUID();
    await assert.rejects(t.client.threads.get(id), /404/);
    await assert.rejects(t.client.threads.getState(id), /404/);
    await assert.rejects(t.client.runs.wait(id, "echo", { input: hi("x") }), /404/);
    await assert.rejects(t.client.runs.list(id), /404/);
  });
});

describe("runs", () => {
  test("wait returns the final values; background run, join, get, list, delete", async () => {
    const th = await t.client.threads.create();
    const out = (await t.client.runs.wait(th.thread_id, "echo", { input: hi("hello") })) as {
      messages: Array<{ type: string; content: string }>;
    };
    assert.deepEqual(out.messages.map((m) => [m.type, m.content]), [["human", "hello"], ["ai", "echo: hello"]]);
    const run = await t.client.runs.create(th.thread_id, "echo", { input: hi("bg"), metadata: { tag: 1 } });
    assert.ok(["pending", "running", "success"].includes(run.status));
    const joined = (await t.client.runs.join(th.thread_id, run.run_id)) as { messages: unknown[] };
    assert.equal(joined.messages.length, 4);
    const got = await t.client.runs.get(th.thread_id, run.run_id);
    assert.equal(got.status, "success");
    assert.equal(got.metadata?.tag, 1);
    const list = await t.client.runs.list(th.thread_id);
    assert.equal(list.length, 2);
    assert.equal(list[0]!.run_id, run.run_id);
    await t.client.runs.delete(th.thread_id, run.run_id);
    await assert.rejects(t.client.runs.get(th.thread_id, run.run_id), /404/);
  });

  test("if_not_exists create makes the thread", async () => {
    const id = crypto.randomUUID();
    await t.client.runs.wait(id, "echo", { input: hi("new"), ifNotExists: "create" });
    assert.equal((await t.client.threads.get(id)).status, "idle");
  });

  test("stateless wait, stream and batch leave no thread behind", async () => {
    const before = await t.client.threads.count();
    const out = (await t.client.runs.wait(null, "echo", { input: hi("stateless") })) as {
      messages: Array<{ content: string }>;
    };
    assert.equal(out.messages[1]!.content, "echo: stateless");
    const events = [];
    for await (const e of t.client.runs.stream(null, "echo", { input: hi("s") })) events.push(e.event);
    assert.equal(events[0], "metadata");
    const batch = await t.client.runs.createBatch([{ assistantId: "echo", input: hi("b1") }, {
      assistantId: "echo",
      input: hi("b2"),
    }]);
    assert.equal(batch.length, 2);
    for (const r of batch) await t.client.runs.join(r.thread_id, r.run_id).catch(() => {});
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await t.client.threads.count(), before);
  });

  test("a failing graph ends the run in error with the message reaching the client", async () => {
    const th = await t.client.threads.create();
    await assert.rejects(
      t.client.runs.wait(th.thread_id, "slow", { input: { fail: true } }),
      /slow graph failed on purpose/,
    );
    const [run] = await t.client.runs.list(th.thread_id);
    assert.equal(run!.status, "error");
    assert.equal((await t.client.threads.get(th.thread_id)).status, "error");
    const events = [];
    for await (const e of t.client.runs.stream(th.thread_id, "slow", { input: { fail: true } })) events.push(e);
    const err = events.find((e) => e.event === "error");
    assert.match(JSON.stringify(err?.data), /slow graph failed on purpose/);
  });

  test("unknown assistant is a 404; invalid stream mode a 422", async () => {
    const th = await t.client.threads.create();
    await assert.rejects(t.client.runs.create(th.thread_id, "no-such-assistant", { input: {} }), /404/);
    const res = await fetch(`${t.url}/threads/${th.thread_id}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "echo", stream_mode: ["bogus"] }),
    });
    assert.equal(res.status, 422);
    const bad = await fetch(`${t.url}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    assert.equal(bad.status, 422);
  });
});

describe("store", () => {
  test("put, get, search with filter, list namespaces, delete", async () => {
    await t.client.store.putItem(["docs", "a"], "k1", { kind: "note", n: 1 });
    await t.client.store.putItem(["docs", "a"], "k2", { kind: "todo", n: 5 });
    await t.client.store.putItem(["docs", "b"], "k3", { kind: "note", n: 9 });
    const item = await t.client.store.getItem(["docs", "a"], "k1");
    assert.deepEqual(item?.value, { kind: "note", n: 1 });
    const notes = await t.client.store.searchItems(["docs"], { filter: { kind: "note" } });
    assert.deepEqual(notes.items.map((i) => i.key).sort(), ["k1", "k3"]);
    const big = await t.client.store.searchItems(["docs"], { filter: { n: { $gt: 2 } } });
    assert.deepEqual(big.items.map((i) => i.key).sort(), ["k2", "k3"]);
    const ns = await t.client.store.listNamespaces({ prefix: ["docs"] });
    assert.deepEqual(ns.namespaces, [["docs", "a"], ["docs", "b"]]);
    assert.deepEqual((await t.client.store.listNamespaces({ maxDepth: 1 })).namespaces, [["docs"]]);
    await t.client.store.deleteItem(["docs", "a"], "k1");
    assert.equal(await t.client.store.getItem(["docs", "a"], "k1"), null); // what the SDK expects of a missing item
  });
});

test("a redeploy that edits the agent's description updates its default assistant (same id)", async () => {
  const s = await startTestServer({ defaultAssistants: { echo: { name: "Echo Agent", description: "first words" } } });
  try {
    const id = defaultAssistantId("Echo Agent");
    assert.equal((await s.client.assistants.get(id)).description, "first words");
    await s.server.reloadGraphs(FIXTURES, { echo: { name: "Echo Agent", description: "second words" } });
    const after = await s.client.assistants.get(id);
    assert.equal(after.description, "second words");
    assert.equal(after.assistant_id, id);
  } finally {
    await s.close();
  }
});
