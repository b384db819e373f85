/**
 * `agentcli dev` of examples/langgraph-js reloads when a graph module changes, as agent.toml
 * projects reload: the changed module (and a module it imports) is imported anew, threads are
 * kept, UI components are built anew; a change that does not load leaves the last good graphs
 * serving, with the cause logged.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type LangGraphDev, ROOT, startLangGraphDev } from "./_dev.ts";
import { until } from "../platform/_harness.ts";

// The example's auth.ts (LangGraph custom auth) applies under dev too, as under `langgraph dev`.
const ALICE = { authorization: "Bearer token-alice" };
let dev: LangGraphDev;
let client: Client;

before(async () => {
  dev = await startLangGraphDev(join(ROOT, "examples/langgraph-js"));
  client = new Client({ apiUrl: dev.url, apiKey: null, defaultHeaders: ALICE, callerOptions: { maxRetries: 0 } });
});
after(() => dev?.stop());

async function chat(threadId: string, content: string): Promise<string> {
  const out = await client.runs.wait(threadId, "chat", { input: { messages: [{ role: "user", content }] } }) as {
    messages: Array<{ content: string }>;
  };
  return out.messages.at(-1)!.content;
}

/** Rewrites a file of the running project and waits for dev's log line of its reload (the `nth` so far). */
async function change(path: string, edit: (text: string) => string, nth: number, line: RegExp): Promise<void> {
  const file = join(dev.dir, path);
  writeFileSync(file, edit(readFileSync(file, "utf8")));
  await until(async () => (dev.output().match(new RegExp(line, "g")) ?? []).length >= nth, `reload ${nth}`);
}

describe("agentcli dev reloads a LangGraph.js project's graphs", () => {
  test("a changed graph module and a module it imports serve at once; a broken one leaves the last good", async () => {
    const thread = await client.threads.create();
    assert.equal(await chat(thread.thread_id, "one"), "Hello! You said: one");
    await change("src/chat.ts", (t) => t.replace("You said", "You wrote"), 1, /reloaded after a change/);
    assert.equal(await chat(thread.thread_id, "two"), "Hello! You wrote: two");
    // A module the graph imports: the state's turn counter now counts by ten.
    await change(
      "src/state.ts",
      (t) => t.replace("reducer: (a, b) => a + b", "reducer: (a, b) => a + 10 * b"),
      2,
      /reloaded after a change/,
    );
    await chat(thread.thread_id, "three");
    const state = await client.threads.getState(thread.thread_id);
    assert.equal((state.values as { turns: number }).turns, 12, "two turns before, one counted by ten after");
    assert.equal((state.values as { messages: unknown[] }).messages.length, 6, "the thread is kept");
    // A UI component: /ui/chat serves its new build.
    await change(
      "src/ui/badge.tsx",
      (t) => t.replace('className="badge"', 'className="badge-count"'),
      3,
      /reloaded after a change/,
    );
    assert.match(await (await fetch(`${dev.url}/ui/chat/entrypoint.js`)).text(), /badge-count/);
    await change(
      "src/chat.ts",
      (t) => t.replace("function reply(", "function reply(("),
      1,
      /Still serving the last good version/,
    );
    assert.match(dev.output(), /Cannot load graph "chat" of langgraph\.json from .*chat\.ts/);
    assert.equal(await chat(thread.thread_id, "four"), "Hello! You wrote: four");
  });
});
