/**
 * Compatibility (see _target.ts): every stream mode, as the SDK sees it: values, updates,
 * messages-tuple, messages, custom, debug (checkpoint events with checkpoint references),
 * tasks, checkpoints, events; what a graph gets from the server (`Send`, `getConfig()`, the
 * custom stream writer, the run `context`, the store).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { collect } from "../server/_harness.ts";
import { startTarget, type Target } from "./_target.ts";

let t: Target;
before(async () => (t = await startTarget()));
after(async () => await t?.close());

type Ev = { event: string; data: unknown };
const of = (events: Ev[], name: string) => events.filter((e) => e.event === name);

describe("stream modes", () => {
  test("values, updates and custom; Send fans out; the writer, getConfig() and context reach the nodes", async () => {
    const th = await t.client.threads.create();
    const events = await collect(t.client.runs.stream(th.thread_id, "tools", {
      input: { topics: ["x", "y"] },
      context: { user: "u1" },
      streamMode: ["values", "updates", "custom"],
    })) as Ev[];
    assert.equal(events[0]!.event, "metadata");
    const custom = of(events, "custom").map((e) => e.data);
    assert.deepEqual(custom.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), [{ working: "x" }, {
      working: "y",
    }]);
    const updates = of(events, "updates").map((e) => Object.keys(e.data as object)[0]);
    assert.deepEqual(updates, ["plan", "work", "work", "chat"]);
    const last = of(events, "values").at(-1)!.data as { results: string[]; reply: string };
    assert.deepEqual(last.results.sort(), ["x@ok", "y@ok"]);
    assert.equal(last.reply, "hello from the model");
    const item = await t.client.store.getItem(["compat", th.thread_id], "x");
    assert.deepEqual(item?.value, { topic: "x", user: "u1" });
  });

  test("messages-tuple streams [message chunk, metadata]; messages streams partial messages with their metadata", async () => {
    const th = await t.client.threads.create();
    const tuple = await collect(
      t.client.runs.stream(th.thread_id, "tools", { input: { topics: ["m"] }, streamMode: ["messages-tuple"] }),
    ) as Ev[];
    const chunks = of(tuple, "messages").map((e) =>
      e.data as [{ content: string; type: string }, Record<string, unknown>]
    );
    assert.ok(chunks.length > 0, JSON.stringify(tuple.map((e) => e.event)));
    assert.equal(chunks.map(([m]) => m.content).join(""), "hello from the model");
    assert.equal(chunks[0]![1].langgraph_node, "chat");
    const legacy = await collect(
      t.client.runs.stream(th.thread_id, "tools", { input: { topics: ["m"] }, streamMode: ["messages"] }),
    ) as Ev[];
    const names = new Set(legacy.map((e) => e.event));
    assert.ok(names.has("messages/metadata") && names.has("messages/partial"), [...names].join(","));
    const partial = of(legacy, "messages/partial").at(-1)!.data as Array<{ content: string }>;
    assert.equal(partial[0]!.content, "hello from the model");
  });

  test("debug: checkpoint events carry checkpoint and parent_checkpoint references, no raw parentConfig", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "chain", { input: {}, streamMode: ["debug"] }),
    ) as Ev[];
    const debug = of(events, "debug").map((e) =>
      e.data as { type: string; step: number; payload: Record<string, unknown> }
    );
    assert.deepEqual([...new Set(debug.map((d) => d.type))].sort(), ["checkpoint", "task", "task_result"]);
    const cps = debug.filter((d) => d.type === "checkpoint").map((d) => d.payload);
    assert.equal(cps.length, 5);
    for (const cp of cps) {
      assert.equal((cp.checkpoint as { thread_id: string }).thread_id, th.thread_id);
      assert.equal(typeof (cp.checkpoint as { checkpoint_id: string }).checkpoint_id, "string");
      assert.ok(!("parentConfig" in cp));
      assert.equal(typeof (cp.config as { configurable: object }).configurable, "object");
      assert.ok(Array.isArray(cp.next) && Array.isArray(cp.tasks));
    }
    assert.equal(cps[0]!.parent_checkpoint, null);
    assert.equal(
      (cps[1]!.parent_config as { configurable: { checkpoint_id: string } }).configurable.checkpoint_id,
      (cps[0]!.checkpoint as { checkpoint_id: string }).checkpoint_id,
    );
    assert.equal(
      (cps[1]!.parent_checkpoint as { checkpoint_id: string }).checkpoint_id,
      (cps[0]!.checkpoint as { checkpoint_id: string }).checkpoint_id,
    );
    assert.deepEqual(cps.at(-1)!.values, { log: ["a", "b", "c"] });
  });

  test("tasks and checkpoints modes", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "chain", { input: {}, streamMode: ["tasks", "checkpoints"] }),
    ) as Ev[];
    const tasks = of(events, "tasks").map((e) => e.data as { name: string; result?: unknown; input?: unknown });
    assert.deepEqual(tasks.filter((x) => "input" in x).map((x) => x.name), ["a", "b", "c"]);
    assert.deepEqual(tasks.filter((x) => "result" in x).map((x) => x.name), ["a", "b", "c"]);
    const cps = of(events, "checkpoints").map((e) =>
      e.data as { values: unknown; next: string[]; metadata: { step: number } }
    );
    assert.deepEqual(cps.map((c) => c.metadata.step), [-1, 0, 1, 2, 3]);
    assert.deepEqual(cps.at(-1)!.values, { log: ["a", "b", "c"] });
    assert.deepEqual(cps.map((c) => c.next), [["__start__"], ["a"], ["b"], ["c"], []]);
  });

  test("events mode streams LangChain callback events", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "chain", { input: {}, streamMode: ["events"] }),
    ) as Ev[];
    const kinds = new Set(of(events, "events").map((e) => (e.data as { event: string }).event));
    assert.ok(kinds.has("on_chain_start") && kinds.has("on_chain_end"), [...kinds].join(","));
    const names = new Set(of(events, "events").map((e) => (e.data as { name: string }).name));
    for (const n of ["a", "b", "c"]) assert.ok(names.has(n), [...names].join(","));
  });
});

describe("store from graph and API", () => {
  test("items written by the API and by a graph share one namespace space; a missing item is null", async () => {
    await t.client.store.putItem(["compat", "api"], "k1", { from: "api" });
    assert.deepEqual((await t.client.store.getItem(["compat", "api"], "k1"))?.value, { from: "api" });
    assert.equal(await t.client.store.getItem(["compat", "api"], "nope"), null);
    const th = await t.client.threads.create();
    await t.client.runs.wait(th.thread_id, "tools", { input: { topics: ["z"] } });
    const found = await t.client.store.searchItems(["compat", th.thread_id]);
    assert.deepEqual(found.items.map((i) => [i.namespace, i.key]), [[["compat", th.thread_id], "z"]]);
    const ns = await t.client.store.listNamespaces({ prefix: ["compat"] });
    assert.ok(ns.namespaces.some((n) => n.join("/") === "compat/api"));
    assert.ok(ns.namespaces.some((n) => n.join("/") === `compat/${th.thread_id}`));
    await t.client.store.deleteItem(["compat", "api"], "k1");
    assert.equal(await t.client.store.getItem(["compat", "api"], "k1"), null);
  });
});
