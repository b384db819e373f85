/**
 * A run's `input` is the graph's state update: anything but an object (or null) is refused
 * at run creation with a 422 that says so, on every run route, through the LangGraph SDK.
 * A graph's own error reaches the client as its type and message, without LangChain's
 * "Troubleshooting URL" paragraph.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { FIXTURES, startTestServer, type TestServer } from "./_harness.ts";

const BAD_INPUTS: unknown[] = ["x", ["hi"], 3, true];
const INPUT_MESSAGE = /422[\s\S]*input: must be an object of the graph's state keys, e\.g\. \{\\?"messages\\?": \[/;

describe("run input", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      graphs: { ...FIXTURES, unreadable: async () => (await import("../fixtures/graphs/unreadable-write.ts")).graph },
    });
  });
  after(async () => {
    await t.close();
  });

  test("a non-object input is a 422 on every run route; no run is created", async () => {
    const thread = await t.client.threads.create();
    for (const input of BAD_INPUTS) {
      // deno-lint-ignore no-explicit-any
      const payload = { input: input as any };
      await assert.rejects(
        t.client.runs.wait(null, "echo", payload),
        INPUT_MESSAGE,
        `stateless wait ${JSON.stringify(input)}`,
      );
      await assert.rejects(t.client.runs.wait(thread.thread_id, "echo", payload), INPUT_MESSAGE);
      await assert.rejects(t.client.runs.create(null, "echo", payload), INPUT_MESSAGE);
      await assert.rejects(t.client.runs.create(thread.thread_id, "echo", payload), INPUT_MESSAGE);
      for (const threadId of [null, thread.thread_id]) {
        await assert.rejects(async () => {
          const stream = threadId === null
            ? t.client.runs.stream(null, "echo", payload)
            : t.client.runs.stream(threadId, "echo", payload);
          for await (const _ of stream) { /* drain */ }
        }, INPUT_MESSAGE);
      }
    }
    // A batch is checked whole before any run starts; the error names the bad run.
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      t.client.runs.createBatch([{ assistantId: "echo", input: { messages: [] } }, {
        assistantId: "echo",
        input: "x" as any,
      }]),
      /422[\s\S]*\[1\]\.input: must be an object/,
    );
    assert.deepEqual(await t.client.runs.list(thread.thread_id), [], "no run was created on the thread");
    assert.equal((await t.client.threads.get(thread.thread_id)).status, "idle");
  });

  test("an object input and a null input (no new input) still run", async () => {
    const thread = await t.client.threads.create();
    const out = (await t.client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ role: "user", content: "hi" }] },
    })) as { messages: Array<{ content: string }> };
    assert.equal(out.messages.at(-1)!.content, "echo: hi");
    const again = (await t.client.runs.wait(thread.thread_id, "echo", { input: null })) as { messages: unknown[] };
    assert.ok(Array.isArray(again.messages));
  });

  test("a graph's error keeps its type and message, without the troubleshooting URL", async () => {
    // A graph whose node writes a message LangChain cannot read (an input message is refused before the run: message-input.test.ts).
    const bad = { messages: [{ role: "user", content: "x" }] };
    // wait: the SDK raises the run's error.
    await assert.rejects(t.client.runs.wait(null, "unreadable", { input: bad }), (err: Error) => {
      assert.match(err.message, /Unable to coerce message/);
      assert.doesNotMatch(err.message, /Troubleshooting URL|docs\.langchain\.com/);
      return true;
    });
    // stream: the error event.
    const thread = await t.client.threads.create();
    const errors: Array<{ error: string; message: string }> = [];
    for await (const chunk of t.client.runs.stream(thread.thread_id, "unreadable", { input: bad })) {
      if (chunk.event === "error") errors.push(chunk.data as { error: string; message: string });
    }
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.error, "Error");
    assert.match(errors[0]!.message, /^Unable to coerce message/);
    assert.doesNotMatch(errors[0]!.message, /Troubleshooting URL/);
    // The stored run and thread say the same.
    const [run] = await t.client.runs.list(thread.thread_id);
    assert.equal(run!.status, "error");
    const joined = (await t.client.runs.join(thread.thread_id, run!.run_id)) as {
      __error__?: { error: string; message: string };
    };
    assert.ok(joined.__error__, JSON.stringify(joined));
    assert.doesNotMatch(joined.__error__.message, /Troubleshooting URL/);
  });
});
