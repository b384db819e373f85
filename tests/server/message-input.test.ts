/**
 * The messages of a run's input (and of a state update, a cron, a batch) are read with
 * LangChain's own coercion before anything is created: a message it cannot read is a 422
 * naming the message by its index and the field, on every way a run gets input, and nothing
 * is created. Every form LangGraph's server reads still runs, and a graph that keeps its own
 * kind of `messages` (not LangGraph's messages reducer) gets them unchecked.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { FIXTURES, startTestServer, type TestServer } from "./_harness.ts";
import { READABLE_MESSAGES } from "../fixtures/chat-messages.ts";

/** A bad message and what the 422 must say about it (the message is `messages[1]`). */
const BAD: Array<[unknown, RegExp]> = [
  [{ foo: 1 }, /input\.messages\[1\]: has no "role" or "type", so it is not a chat message/],
  [{ role: "bogus", content: "x" }, /input\.messages\[1\]\.role: "bogus" is not a message role; use one of "user"/],
  [{ type: 7, content: "x" }, /input\.messages\[1\]\.type: 7 is not a message type/],
  [{ role: "tool", content: "x" }, /input\.messages\[1\]\.tool_call_id: a tool message needs the id/],
  [{
    role: "assistant",
    content: "",
    tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{not json" } }],
  }, /input\.messages\[1\]\.tool_calls\[0\]\.function\.arguments: must be a JSON string/],
  [5, /input\.messages\[1\]: must be a message object, e\.g\. \{"role": "user", "content": "Hi"\}, not number/],
  [null, /input\.messages\[1\]: must be a message object.*not null/],
  [["bogus", "x"], /input\.messages\[1\]\[0\]: "bogus" is not a message role/],
  [
    { lc: 1, type: "constructor", id: ["langchain_core", "messages", "NoSuchMessage"], kwargs: { content: "x" } },
    /input\.messages\[1\]: LangChain cannot read it as a chat message \(Unable to coerce message/,
  ],
];

const GOOD = { role: "user", content: "first" };

/** Each form LangGraph's server reads, in one input. */
const READABLE: unknown[] = [
  READABLE_MESSAGES[0],
  { role: "developer", content: "be kind" },
  ...READABLE_MESSAGES.slice(1),
  // LangChain reads these too (and LangGraph's server runs them); a model may refuse them.
  { role: "user", content: 5 },
  { role: "assistant", content: "", tool_calls: [{ args: {} }] },
  { role: "user", content: "last" },
];

async function post(
  t: TestServer,
  path: string,
  body: unknown,
): Promise<{ status: number; body: { detail?: string; hint?: string } }> {
  const res = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() as { detail?: string; hint?: string } };
}

describe("input messages", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      graphs: { ...FIXTURES, log: async () => (await import("../fixtures/graphs/log-messages.ts")).graph },
    });
  });
  after(async () => {
    await t.close();
  });

  test("a message LangChain cannot read is a 422 naming it and its field, on every run route; nothing is created", async () => {
    const thread = await t.client.threads.create();
    const tid = thread.thread_id;
    for (const [bad, expected] of BAD) {
      const input = { messages: [GOOD, bad] };
      const routes: Array<[string, unknown]> = [
        [`/threads/${tid}/runs/wait`, { assistant_id: "echo", input }],
        [`/threads/${tid}/runs/stream`, { assistant_id: "echo", input }],
        [`/threads/${tid}/runs`, { assistant_id: "echo", input }],
        ["/runs/wait", { assistant_id: "echo", input }],
        ["/runs/stream", { assistant_id: "echo", input }],
        ["/runs", { assistant_id: "echo", input }],
        ["/runs/crons", { assistant_id: "echo", schedule: "0 0 1 1 *", input }],
        [`/threads/${tid}/runs/crons`, { assistant_id: "echo", schedule: "0 0 1 1 *", input }],
      ];
      for (const [path, body] of routes) {
        const res = await post(t, path, body);
        assert.equal(res.status, 422, `${path} ${JSON.stringify(bad)}: ${JSON.stringify(res.body)}`);
        assert.match(res.body.detail!, expected, path);
        assert.match(res.body.hint!, /"role".*"content"/);
        assert.doesNotMatch(JSON.stringify(res.body), /\n\s+at |node_modules|Troubleshooting URL/);
      }
      const cmd = await post(t, `/threads/${tid}/runs/wait`, { assistant_id: "echo", command: { update: input } });
      assert.equal(cmd.status, 422);
      assert.match(cmd.body.detail!, new RegExp(expected.source.replace("input\\.", "command\\.update\\.")));
      const batch = await post(t, "/runs/batch", [{ assistant_id: "echo", input: { messages: [GOOD] } }, {
        assistant_id: "echo",
        input,
      }]);
      assert.equal(batch.status, 422);
      assert.match(batch.body.detail!, new RegExp(expected.source.replace("input\\.", "\\[1\\]\\.input\\.")));
    }
    // Through the LangGraph SDK too: the error it raises says which message and field.
    await assert.rejects(
      t.client.runs.wait(tid, "echo", { input: { messages: [{ foo: 1 }] } }),
      /422[\s\S]*input\.messages\[0\]: has no \\?"role\\?" or \\?"type\\?"/,
    );
    // A message given alone (not in a list) is named without an index.
    const alone = await post(t, "/runs/wait", { assistant_id: "echo", input: { messages: { foo: 1 } } });
    assert.match(alone.body.detail!, /input\.messages: has no "role" or "type"/);
    assert.deepEqual(await t.client.runs.list(tid), [], "no run was created");
    assert.deepEqual(await t.client.crons.search({}), [], "no cron was created");
    const after = await t.client.threads.get(tid);
    assert.equal(after.status, "idle");
    assert.equal((await fetch(`${t.url}/threads/${tid}/state`)).status, 200);
  });

  test("a state update with such a message is a 422 too, and leaves the state as it was", async () => {
    const thread = await t.client.threads.create();
    await t.client.runs.wait(thread.thread_id, "echo", { input: { messages: [GOOD] } });
    const before = await t.client.threads.getState(thread.thread_id);
    const res = await post(t, `/threads/${thread.thread_id}/state`, {
      values: { messages: [{ role: "bogus", content: "x" }] },
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.detail!, /values\.messages\[0\]\.role: "bogus" is not a message role/);
    const now = await t.client.threads.getState(thread.thread_id);
    assert.equal(now.checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
  });

  test("every form LangGraph's server reads still runs", async () => {
    const thread = await t.client.threads.create();
    const out = (await t.client.runs.wait(thread.thread_id, "echo", { input: { messages: READABLE } })) as {
      messages: Array<{ type: string; content: unknown }>;
    };
    assert.equal(out.messages.length, READABLE.length + 1);
    assert.deepEqual(out.messages.slice(0, 4).map((m) => m.type), ["system", "system", "human", "human"]);
    assert.equal(out.messages.at(-1)!.content, "echo: last");
    const state = await t.client.threads.getState(thread.thread_id);
    assert.equal((state.values as { messages: unknown[] }).messages.length, READABLE.length + 1);
    // A remove message (by id) is read too.
    const id = (state.values as { messages: Array<{ id: string }> }).messages[0]!.id;
    await t.client.threads.updateState(thread.thread_id, { values: { messages: [{ type: "remove", id }] } });
    assert.equal(
      ((await t.client.threads.getState(thread.thread_id)).values as { messages: unknown[] }).messages.length,
      READABLE.length,
    );
  });

  test("a graph whose messages are not chat messages gets them as they are", async () => {
    const thread = await t.client.threads.create();
    const out = (await t.client.runs.wait(thread.thread_id, "log", { input: { messages: [{ foo: 1 }, 5] } })) as {
      messages: unknown[];
    };
    assert.deepEqual(out.messages, [{ foo: 1 }, 5, { seen: 2 }]);
    await t.client.threads.updateState(thread.thread_id, { values: { messages: [{ bar: 2 }] } });
    assert.deepEqual(
      ((await t.client.threads.getState(thread.thread_id)).values as { messages: unknown[] }).messages.at(-1),
      { bar: 2 },
    );
    const batch = await post(t, "/runs/batch", [{ assistant_id: "log", input: { messages: [{ foo: 1 }] } }]);
    assert.equal(batch.status, 200, JSON.stringify(batch.body));
  });
});
