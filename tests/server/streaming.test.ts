/**
 * SSE streaming through the SDK: `metadata` first, each stream mode, subgraph namespaces,
 * integer ids, rejoin with `Last-Event-ID` (no event lost or repeated), join of a finished
 * run from the durable log, human in the loop (interrupt, thread status, resume).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { collect, startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const hi = (content: string) => ({ messages: [{ role: "user", content }] });

describe("stream modes", () => {
  test("values, updates, messages-tuple, custom, with metadata first", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "echo", {
        input: hi("yo"),
        streamMode: ["values", "updates", "messages-tuple", "custom"],
      }),
    );
    assert.equal(events[0]!.event, "metadata");
    const meta = events[0]!.data as { run_id: string };
    assert.ok(meta.run_id);
    const names = new Set(events.map((e) => e.event));
    for (const n of ["values", "updates", "messages", "custom"]) assert.ok(names.has(n as never), `missing ${n}`);
    const tokens = events.filter((e) => e.event === "messages").map((e) =>
      (e.data as [{ content: string }, unknown])[0].content
    ).join("");
    assert.equal(tokens, "echo: yo");
    const upd = events.find((e) => e.event === "updates")!.data as { respond: { messages: Array<{ type: string }> } };
    assert.equal(upd.respond.messages[0]!.type, "ai");
    const custom = events.find((e) => e.event === "custom")!.data as { note: string };
    assert.equal(custom.note, "responding");
    const last = events.filter((e) => e.event === "values").at(-1)!.data as { messages: unknown[] };
    assert.equal(last.messages.length, 2);
  });

  test("legacy messages mode: metadata, partial accumulation, complete", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "echo", { input: hi("ab"), streamMode: "messages" }),
    );
    const names = events.map((e) => e.event as string);
    assert.ok(names.includes("messages/metadata"));
    const partials = events.filter((e) => e.event === "messages/partial").map((e) =>
      (e.data as Array<{ content: string }>)[0]!.content
    );
    assert.equal(partials.at(-1), "echo: ab");
    assert.ok(partials.length > 1 && partials[0]!.length < partials.at(-1)!.length);
    assert.ok(names.includes("messages/complete"));
  });

  test("debug, tasks, checkpoints", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "echo", { input: hi("d"), streamMode: ["debug", "tasks", "checkpoints"] }),
    );
    const names = new Set(events.map((e) => e.event as string));
    for (const n of ["debug", "tasks", "checkpoints"]) assert.ok(names.has(n), `missing ${n}: ${[...names]}`);
  });

  test("events mode streams LangChain events", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "echo", { input: hi("e"), streamMode: ["events", "values"] }),
    );
    const kinds = new Set(events.filter((e) => e.event === "events").map((e) => (e.data as { event: string }).event));
    assert.ok(kinds.has("on_chat_model_stream"), [...kinds].join(","));
    assert.ok(events.some((e) => e.event === "values"));
  });

  test("stream_subgraphs adds namespaces to event names", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "subgraph", { input: {}, streamMode: ["updates"], streamSubgraphs: true }),
    );
    const names = events.map((e) => e.event as string);
    assert.ok(names.includes("updates"));
    const sub = names.find((n) => n.startsWith("updates|child:"));
    assert.ok(sub, names.join(","));
    const plain = await collect(t.client.runs.stream(th.thread_id, "subgraph", { input: {}, streamMode: ["updates"] }));
    assert.ok(!plain.some((e) => (e.event as string).includes("|")));
  });
});

describe("join and replay", () => {
  test("integer ids from 0 (as LangGraph's server); rejoin with Last-Event-ID resumes after the last seen event", async () => {
    const th = await t.client.threads.create();
    const run = await t.client.runs.create(th.thread_id, "slow", {
      input: { ms: 300 },
      streamMode: ["custom", "values"],
    });
    const first: Array<{ id?: string; event: string }> = [];
    for await (const e of t.client.runs.joinStream(th.thread_id, run.run_id)) {
      first.push(e);
      if (first.length === 4) break;
    }
    assert.deepEqual(first.map((e) => e.id), ["0", "1", "2", "3"]);
    const rest = await collect(t.client.runs.joinStream(th.thread_id, run.run_id, { lastEventId: "3" }));
    assert.equal(rest[0]!.id, "4");
    const ids = rest.map((e) => Number(e.id));
    assert.deepEqual(ids, ids.map((_, i) => 4 + i));
    assert.equal((await t.client.runs.get(th.thread_id, run.run_id)).status, "success");
    const all = await collect(t.client.runs.joinStream(th.thread_id, run.run_id, { lastEventId: "-1" }));
    assert.equal(all.length, 4 + rest.length);
    assert.equal(all[0]!.event, "metadata");
  });

  test("a run's events replay from the durable log after it finished", async () => {
    const th = await t.client.threads.create();
    const live = await collect(
      t.client.runs.stream(th.thread_id, "echo", { input: hi("replay"), streamMode: ["values", "updates"] }),
    );
    const runId = (live[0]!.data as { run_id: string }).run_id;
    const again = await collect(t.client.runs.joinStream(th.thread_id, runId));
    assert.deepEqual(again.map((e) => e.event), live.map((e) => e.event));
    assert.deepEqual(again.at(-1)!.data, live.at(-1)!.data);
  });
});

describe("human in the loop", () => {
  test("interrupt -> __interrupt__, thread interrupted with interrupts, state tasks, resume with command", async () => {
    const th = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(th.thread_id, "interrupt", {
        input: { question: "ok?" },
        streamMode: ["updates", "values"],
      }),
    );
    const upd = events.find((e) => e.event === "updates" && "__interrupt__" in (e.data as object));
    assert.ok(upd, JSON.stringify(events));
    const intr = (upd!.data as { __interrupt__: Array<{ value: { question: string }; id: string }> }).__interrupt__[0]!;
    assert.deepEqual(intr.value, { question: "ok?" });
    const thread = await t.client.threads.get(th.thread_id);
    assert.equal(thread.status, "interrupted");
    const flat = Object.values(thread.interrupts).flat();
    assert.equal(flat[0]!.id, intr.id);
    const state = await t.client.threads.getState(th.thread_id);
    assert.deepEqual(state.next, ["ask"]);
    assert.deepEqual(state.tasks[0]!.interrupts[0]!.value, { question: "ok?" });
    const out = (await t.client.runs.wait(th.thread_id, "interrupt", { command: { resume: "yes" } })) as {
      answer: string;
      log: string[];
    };
    assert.equal(out.answer, "yes");
    assert.deepEqual(out.log, ["asked", "done:yes"]);
    const done = await t.client.threads.get(th.thread_id);
    assert.equal(done.status, "idle");
    assert.deepEqual(done.interrupts, {});
  });

  test("wait on an interrupting run returns __interrupt__", async () => {
    const th = await t.client.threads.create();
    const out = (await t.client.runs.wait(th.thread_id, "interrupt", { input: { question: "q" } })) as {
      __interrupt__: Array<{ value: unknown }>;
    };
    assert.deepEqual(out.__interrupt__[0]!.value, { question: "q" });
  });
});
