/**
 * A LangGraph.js project without node_modules under the single executable (`dist/agentcli`,
 * after `npm run build`, copied outside the checkout so nothing resolves from the repository's
 * node_modules): its imports of `@langchain/*`, `hono` and `zod` are served by the packages
 * bundled in the executable, the instances its server runs. examples/langgraph-js through
 * LangGraph's SDK (as dev's bypass user): both graphs run, the custom Hono route answers and its
 * middleware wraps the API; prebuilt's ReAct agent on @langchain/openai (the scripted model
 * server) and a graph of prebuilt's ToolNode with zod tools run (one @langchain/core); an entry point the executable does not lend stops the start with an error
 * naming it; the example deployed to `dist/agentcli platform serve` runs in its revision process.
 * Skipped when the executable is not built.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { LENT_ENTRY_POINTS } from "../../scripts/build-sea-packages.ts";
import { type PlatformServe, startPlatformServe } from "../platform/_harness.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { type DevProcess, startDevProcess } from "../fixtures/dev-process.ts";
import { SERVING } from "../_spawn-serving.ts";

/** A user of examples/langgraph-js/src/auth.ts. */
const ALICE = { authorization: "Bearer token-alice" };
const ROOT = new URL("../..", import.meta.url).pathname;
const EXE = join(ROOT, "dist/agentcli");
const skip = existsSync(EXE) ? false : "dist/agentcli is not built (npm run build)";

type Dev = DevProcess;

/** The executable, copied into `work`, running `dev` in `work/project`; waits for /info unless `expectExit`. */
function startDev(work: string, opts: { env?: Record<string, string>; expectExit?: boolean } = {}): Promise<Dev> {
  copyFileSync(EXE, join(work, "agentcli"));
  return startDevProcess({
    argv: (port) => [join(work, "agentcli"), "dev", "--port", String(port), "--allow-blocking"],
    serving: opts.expectExit ? undefined : SERVING.dev,
    cwd: join(work, "project"),
    env: { HOME: work, BROWSER: "none", ...opts.env },
    ready: opts.expectExit ? null : "/info",
  });
}

describe("dist/agentcli dev: examples/langgraph-js without node_modules", { skip }, () => {
  let work: string;
  let dev: Dev;
  // The example's auth.ts (LangGraph custom auth) guards it under dev too, as under `langgraph dev`.
  const client = () =>
    new Client({ apiUrl: dev.url, apiKey: null, defaultHeaders: ALICE, callerOptions: { maxRetries: 0 } });

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "agentcli-lg-exe-"));
    cpSync(join(ROOT, "examples/langgraph-js"), join(work, "project"), {
      recursive: true,
      filter: (p) => !p.includes("/node_modules") && !p.includes("/.agentcli"),
    });
    dev = await startDev(work, {
      env: { LANGGRAPH_CONFIG: JSON.stringify({ counter: { configurable: { step: 5 } } }) },
    });
  });
  after(async () => {
    await dev?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test("serves both graphs; the SDK logger of a graph module is the server's", async () => {
    const info = await (await fetch(`${dev.url}/info`)).json() as { graphs: string[] };
    assert.deepEqual(info.graphs.sort(), ["chat", "counter"]);
    assert.match(dev.output(), /chat graph loaded/);
  });

  test("runs the chat graph (@langchain/core messages, StateGraph, react-ui/server) on a thread", async () => {
    const thread = await client().threads.create();
    const out = await client().runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "ping" }] },
    }) as { messages: Array<{ content: string; type: string }>; turns: number };
    assert.equal(out.messages.at(-1)!.content, "Hello! You said: ping");
    assert.equal(out.messages.at(-1)!.type, "ai");
    assert.equal(out.turns, 1);
    const state = await client().threads.getState(thread.thread_id);
    assert.equal((state.values as { messages: unknown[] }).messages.length, 2);
  });

  test("runs the factory graph built from the assistant's config", async () => {
    const out = await client().runs.wait(null, "counter", { input: { count: 1 } }) as { count: number };
    assert.equal(out.count, 6);
  });

  test("mounts the http.app Hono routes beside the API", async () => {
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

test("dist/agentcli dev: an entry point the executable does not lend stops the start, named", { skip }, async () => {
  const work = mkdtempSync(join(tmpdir(), "agentcli-lg-exe-"));
  try {
    mkdirSync(join(work, "project"));
    writeFileSync(
      join(work, "project/langgraph.json"),
      JSON.stringify({ node_version: "22", graphs: { g: "./graph.ts:graph" } }),
    );
    writeFileSync(
      join(work, "project/graph.ts"),
      `import { StateGraph } from "@langchain/langgraph";\nimport { cosineSimilarity } from "@langchain/core/utils/math";\nexport const graph = cosineSimilarity && StateGraph;\n`,
    );
    const dev = await startDev(work, { expectExit: true });
    const code = await dev.exited;
    assert.notEqual(code, 0);
    assert.match(dev.output(), /Cannot import "@langchain\/core\/utils\/math"/);
    assert.match(dev.output(), /"@langchain\/core\/messages"/); // the lent entry points are named
    assert.doesNotMatch(dev.output(), /at .*\(|node_modules/); // no stack, no install path
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test("dist/agentcli dev: prebuilt's ReAct agent on @langchain/openai, ToolNode, zod tools, the SDK's Auth, hono", {
  skip,
}, async () => {
  const models = await startModelServer();
  const work = mkdtempSync(join(tmpdir(), "agentcli-lg-exe-"));
  let dev: Dev | undefined;
  try {
    mkdirSync(join(work, "project"));
    writeFileSync(
      join(work, "project/langgraph.json"),
      JSON.stringify({ node_version: "22", graphs: { tools: "./graph.ts:graph", agent: "./agent.ts:agent" } }),
    );
    writeFileSync(
      join(work, "project/graph.ts"),
      `import { tool } from "@langchain/core/tools";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { Auth } from "@langchain/langgraph-sdk/auth";
import { z } from "zod";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";

const add = tool(({ a, b }) => String(a + b), {
  name: "add",
  description: "Adds two numbers",
  schema: z.object({ a: z.number(), b: z.number() }),
});
const checks = {
  auth: typeof new Auth().authenticate,
  hono: typeof new Hono().fetch,
  exception: new HTTPException(418).status,
};
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("call", () => ({
    messages: [new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }] })],
  }))
  .addNode("tools", new ToolNode([add]))
  .addNode("done", () => ({ messages: [new AIMessage(JSON.stringify(checks))] }))
  .addEdge(START, "call").addEdge("call", "tools").addEdge("tools", "done").addEdge("done", END)
  .compile();
`,
    );
    // A ReAct agent of prebuilt whose model is @langchain/openai's, against the scripted model server.
    writeFileSync(
      join(work, "project/agent.ts"),
      `import { ChatOpenAI } from "@langchain/openai";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { tool } from "@langchain/core/tools";
import * as z from "zod";

const multiply = tool(({ a, b }) => String(a * b), {
  name: "multiply",
  description: "Multiplies two numbers",
  schema: z.object({ a: z.number(), b: z.number() }),
});
const llm = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "test-key", configuration: { baseURL: process.env.MODEL_URL } });
export const agent = createReactAgent({ llm, tools: [multiply] });
`,
    );
    models.script({ toolCalls: [{ name: "multiply", args: { a: 6, b: 7 } }] }, { text: "It is 42." });
    dev = await startDev(work, { env: { MODEL_URL: models.openaiBaseUrl } });
    const client = new Client({ apiUrl: dev.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    const agent = await client.runs.wait(null, "agent", {
      input: { messages: [{ role: "user", content: "6 times 7?" }] },
    }) as { messages: Array<{ type: string; content: string }> };
    assert.deepEqual(agent.messages.map((m) => [m.type, m.content]), [
      ["human", "6 times 7?"],
      ["ai", ""],
      ["tool", "42"],
      ["ai", "It is 42."],
    ]);
    assert.equal(models.requests.length, 2);
    const out = await client.runs.wait(null, "tools", {
      input: { messages: [{ role: "user", content: "add" }] },
    }) as { messages: Array<{ type: string; content: string; name?: string }> };
    assert.deepEqual(out.messages.map((m) => m.type), ["human", "ai", "tool", "ai"]);
    assert.equal(out.messages[2]!.content, "5");
    assert.equal(out.messages[2]!.name, "add");
    assert.deepEqual(JSON.parse(out.messages[3]!.content), { auth: "function", hono: "function", exception: 418 });
  } finally {
    await dev?.stop();
    await models.close();
    rmSync(work, { recursive: true, force: true });
  }
});

test("every entry point the executable lends is one its package exports", () => {
  for (const spec of LENT_ENTRY_POINTS) {
    assert.doesNotThrow(() => import.meta.resolve(spec), `${spec} does not resolve from the checkout`);
  }
});

test(
  "dist/agentcli platform serve: a deployed LangGraph.js project's revision runs on the lent packages",
  { skip },
  async () => {
    const work = mkdtempSync(join(tmpdir(), "agentcli-lg-exe-"));
    let server: PlatformServe | undefined;
    try {
      const exe = join(work, "agentcli");
      copyFileSync(EXE, exe);
      cpSync(join(ROOT, "examples/langgraph-js"), join(work, "project"), {
        recursive: true,
        filter: (p) => !p.includes("/node_modules") && !p.includes("/.agentcli"),
      });
      server = await startPlatformServe({ exe, dataDir: join(work, "data"), cwd: work, env: { HOME: work } });
      const base = server.url;
      const key = server.key ?? assert.fail(`no bootstrap key:\n${server.output()}`);
      const deployed = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(exe, ["deploy", "--platform-url", base, "--yes"], {
          cwd: join(work, "project"),
          env: { HOME: work, PLATFORM_API_KEY: key },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        child.on("close", (code) => resolve({ code, output: out }));
      });
      assert.equal(deployed.code, 0, deployed.output + server.output());
      const url = deployed.output.match(/URL: (\S+)/)?.[1];
      assert.ok(url, deployed.output);
      // The example's custom auth replaces the platform key (no [auth]): its own token.
      const client = new Client({ apiUrl: url, apiKey: key, defaultHeaders: ALICE, callerOptions: { maxRetries: 0 } });
      const chat = await client.runs.wait(null, "chat", {
        input: { messages: [{ role: "user", content: "ping" }] },
      }) as { messages: Array<{ content: string }> };
      assert.equal(chat.messages.at(-1)!.content, "Hello! You said: ping");
      const hello = await fetch(`${url}/hello`, { headers: { "x-api-key": key, ...ALICE } });
      assert.deepEqual(await hello.json(), { hello: "Hello" });
    } finally {
      await server?.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
