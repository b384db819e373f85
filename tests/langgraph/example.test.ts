/**
 * examples/langgraph-js runs with `agentcli dev` unchanged (found without --config), driven by
 * LangGraph's SDK: both graphs (a Promise export whose modules import types without
 * `import type` and log with the SDK logger at import; a factory of the run's config), the env
 * object of langgraph.json in process.env, the custom Hono route beside the API with its
 * middleware wrapping the API's answers, LANGGRAPH_CONFIG on the default assistants, and
 * threads that outlive a restart. Auth assertions are in example-auth.test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type LangGraphDev, ROOT, startLangGraphDev } from "./_dev.ts";

const EXAMPLE = join(ROOT, "examples/langgraph-js");
// The example's auth.ts (LangGraph custom auth) applies under dev too, as under `langgraph dev`.
const ALICE = { authorization: "Bearer token-alice" };
let dev: LangGraphDev;
let client: Client;

before(async () => {
  dev = await startLangGraphDev(EXAMPLE, {
    env: {
      LANGGRAPH_CONFIG: JSON.stringify({ counter: { configurable: { step: 5 }, context: { who: "test" } } }),
    },
  });
  client = new Client({ apiUrl: dev.url, apiKey: null, defaultHeaders: ALICE, callerOptions: { maxRetries: 0 } });
});
after(() => dev?.stop());

describe("examples/langgraph-js under agentcli dev", () => {
  test("serves the graphs of langgraph.json, each with its default assistant", async () => {
    const info = await (await fetch(`${dev.url}/info`)).json() as { graphs: string[] };
    assert.deepEqual(info.graphs.sort(), ["chat", "counter"]);
    const assistants = await client.assistants.search({ limit: 10 });
    assert.deepEqual(assistants.map((a) => a.graph_id).sort(), ["chat", "counter"]);
    const counter = assistants.find((a) => a.graph_id === "counter")!;
    assert.equal(counter.name, "counter");
    assert.deepEqual(counter.config, { configurable: { step: 5 } });
    assert.deepEqual(counter.context, { who: "test" });
    assert.match(dev.output(), /chat graph loaded/); // the SDK logger, called at import
  });

  test("runs the Promise-exported chat graph with the env of langgraph.json", async () => {
    const thread = await client.threads.create();
    const out = await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "ping" }] },
    }) as { messages: Array<{ content: string }>; turns: number };
    assert.equal(out.messages.at(-1)!.content, "Hello! You said: ping");
    assert.equal(out.turns, 1);
  });

  test("builds the factory graph from the assistant's config (LANGGRAPH_CONFIG)", async () => {
    const out = await client.runs.wait(null, "counter", { input: { count: 1 } }) as { count: number };
    assert.equal(out.count, 6);
  });

  test("mounts the http.app's routes beside the API; its middleware wraps the API", async () => {
    const hello = await fetch(`${dev.url}/hello`, { headers: ALICE });
    assert.deepEqual(await hello.json(), { hello: "Hello" });
    const search = await fetch(`${dev.url}/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json", ...ALICE },
      body: "{}",
    });
    assert.equal(search.status, 200);
    assert.equal(search.headers.get("x-example"), "langgraph-js");
  });
});
