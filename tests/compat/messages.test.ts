/**
 * The message forms a run's input may take, as LangGraph's server reads them (run unchanged
 * against ours and, with AGENTCLI_COMPAT_PEER=1, against `@langchain/langgraph-cli dev`):
 * role and type dicts, content strings and content blocks, tool calls in LangChain's and
 * OpenAI's form, tool messages, `[role, content]` pairs, plain strings, LangChain serialized
 * messages. (A message neither reads is refused with a 422 by ours before the run, and fails
 * the run on the peer: tests/server/message-input.test.ts.)
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { READABLE_MESSAGES } from "../fixtures/chat-messages.ts";
import { startTarget, type Target } from "./_target.ts";

const READABLE = READABLE_MESSAGES as unknown[];

describe("input message forms", () => {
  let t: Target;
  before(async () => {
    t = await startTarget();
  });
  after(async () => {
    await t?.close();
  });

  test("every form runs, read as the message type it names", async () => {
    const thread = await t.client.threads.create();
    const out = (await t.client.runs.wait(thread.thread_id, "chat", { input: { messages: READABLE } })) as {
      messages: Array<{ type: string; content: unknown }>;
    };
    assert.equal(out.messages.at(-1)!.content, "system,human,human,ai,tool,ai,tool,ai,human,human");
    const [run] = await t.client.runs.list(thread.thread_id);
    assert.equal(run!.status, "success");
  });
});
