/**
 * Nothing that leaves the process carries a secret. `agentcli dev` runs a project whose model
 * (the local OpenAI-wire model server) answers with the API key in its output, whole,
 * without its `sk-` prefix and in base64, or fails the way a provider does, quoting the key.
 * Every GET route of /openapi.json (with real ids), the POST routes that return run output,
 * every stream mode, A2A `message/send` and `message/stream`, MCP `tools/call` (MCP SDK
 * client), a webhook body (a local receiver), the model's own context and the server's
 * stdout/stderr are scanned for the key and any 16-character run of it or of its base64.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { type DevServer, startDevServer } from "../fixtures/dev-server.ts";

const KEY = `sk-sentinel${crypto.randomUUID().replaceAll("-", "")}`;
const b64 = (s: string) => Buffer.from(s).toString("base64");
/** The forms a leak may take; any 16-character run of one is a leak. */
const FORMS = [
  KEY,
  ...["", "x", "xy"].flatMap((pad) => [b64(pad + KEY), Buffer.from(pad + KEY).toString("base64url")]).map((s) =>
    s.slice(4, -4)
  ),
];
const RUNS = FORMS.flatMap((f) => Array.from({ length: f.length - 15 }, (_, i) => f.slice(i, i + 16)));
const leaked = (text: string) => RUNS.filter((r) => text.includes(r));

const OUTPUT = `Here it is: ${KEY} then ${KEY.slice(3)} then ${b64(KEY)} then ${b64(`x${KEY}`)} - done.`;
const UPSTREAM = `Incorrect API key provided: {api_key}. Without prefix: ${KEY.slice(3)}; base64: ${b64(`xy${KEY}`)}`;
const MODES = ["values", "updates", "messages", "messages-tuple", "events", "debug", "custom"];

let model: ModelServer;
let dev: DevServer;
let url: string;
let receiver: Server;
let hookUrl: string;
const hooks: string[] = [];

before(async () => {
  model = await startModelServer();
  for (let i = 0; i < 40; i++) {
    model.script({ when: "LEAK", text: OUTPUT }, { when: "FAIL", error: { status: 401, message: UPSTREAM } });
  }
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      hooks.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  dev = await startDevServer({
    fixture: "memory",
    env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: model.openaiBaseUrl },
  });
  url = dev.url;
});

after(async () => {
  await dev?.stop();
  await new Promise((r) => receiver?.close(r));
  await model?.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

function clean(where: string, text: string): void {
  assert.deepEqual(leaked(text), [], `${where} leaks the key: ${text.slice(0, 800)}`);
}

const input = (text: string) => ({ messages: [{ role: "user", content: text }] });
let assistantId: string;
const threads: Record<string, string> = {};
const runs: Record<string, string> = {};

test("run output and upstream errors: /runs/wait, /threads/{id}/runs/wait and every stream mode", async () => {
  assistantId = (JSON.parse((await call("POST", "/assistants/search", {})).text) as Array<{ assistant_id: string }>)[0]!
    .assistant_id;
  for (const what of ["LEAK", "FAIL"]) {
    const thread = JSON.parse((await call("POST", "/threads", {})).text).thread_id as string;
    threads[what] = thread;
    const waited = await call("POST", `/threads/${thread}/runs/wait`, {
      assistant_id: assistantId,
      input: input(what),
    });
    if (what === "LEAK") assert.match(waited.text, /Here it is: \[redacted\]/, "the output itself still arrives");
    clean(`/threads/{id}/runs/wait ${what}`, waited.text);
    clean(
      `/runs/wait ${what}`,
      (await call("POST", "/runs/wait", { assistant_id: assistantId, input: input(what) })).text,
    );
    for (const mode of MODES) {
      const streamed = await call("POST", `/threads/${thread}/runs/stream`, {
        assistant_id: assistantId,
        input: input(what),
        stream_mode: [mode],
      });
      assert.equal(streamed.status, 200, streamed.text);
      if (what === "FAIL") assert.match(streamed.text, /event: error/);
      clean(`stream ${mode} ${what}`, streamed.text);
    }
    const list = JSON.parse((await call("GET", `/threads/${thread}/runs`)).text) as Array<{ run_id: string }>;
    runs[what] = list[0]!.run_id;
  }
  assert.match(dev.output(), /Incorrect API key provided/, "the failure reached the log");
});

test("every GET route of /openapi.json, with real ids, and the POST routes that read state", async () => {
  const doc = JSON.parse((await call("GET", "/openapi.json")).text) as {
    paths: Record<string, Record<string, unknown>>;
  };
  for (const what of ["LEAK", "FAIL"]) {
    const thread = threads[what]!;
    const state = JSON.parse((await call("GET", `/threads/${thread}/state`)).text) as {
      checkpoint?: { checkpoint_id?: string };
    };
    const ids: Record<string, string> = {
      assistant_id: assistantId,
      thread_id: thread,
      run_id: runs[what]!,
      checkpoint_id: state.checkpoint?.checkpoint_id ?? "",
      namespace: "agent",
    };
    let served = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      // The thread's own stream waits for runs to come; it never ends on its own.
      if (!item.get || path === "/threads/{thread_id}/stream") continue;
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      if (names.some((n) => !ids[n])) continue;
      const res = await call("GET", path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(ids[n]!)));
      assert.ok(res.status < 500, `${path}: ${res.status} ${res.text.slice(0, 300)}`);
      clean(`GET ${path} ${what}`, res.text);
      served++;
    }
    assert.ok(served >= 15, `GET routes called: ${served}`);
    for (
      const [path, body] of [[`/threads/${thread}/history`, {}], ["/threads/search", {}], [
        `/threads/${thread}/state/checkpoint`,
        { checkpoint: {} },
      ], ["/runs/search", {}]] as const
    ) {
      const res = await call("POST", path, body);
      clean(`POST ${path} ${what}`, res.text);
    }
  }
});

test("A2A message/send and message/stream", async () => {
  for (const what of ["LEAK", "FAIL"]) {
    for (const method of ["message/send", "message/stream"]) {
      const res = await call("POST", `/a2a/${assistantId}`, {
        jsonrpc: "2.0",
        id: 1,
        method,
        params: {
          message: {
            kind: "message",
            messageId: crypto.randomUUID(),
            role: "user",
            parts: [{ kind: "text", text: what }],
          },
        },
      });
      assert.ok(res.status < 500, res.text);
      if (what === "LEAK") assert.match(res.text, /\[redacted\]/, `${method}: ${res.text.slice(0, 500)}`);
      clean(`A2A ${method} ${what}`, res.text);
    }
  }
});

test("MCP tools/call through the MCP SDK client", async () => {
  const client = new McpClient({ name: "redact-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  try {
    const tool = (await client.listTools()).tools[0]!;
    for (const what of ["LEAK", "FAIL"]) {
      const result = await client.callTool({ name: tool.name, arguments: { message: what } });
      const text = JSON.stringify(result);
      if (what === "LEAK") assert.match(text, /\[redacted\]/, text);
      clean(`MCP tools/call ${what}`, text);
    }
  } finally {
    await client.close();
  }
});

test("a webhook body", async () => {
  for (const what of ["LEAK", "FAIL"]) {
    const before = hooks.length;
    await call("POST", "/runs/wait", { assistant_id: assistantId, input: input(what), webhook: hookUrl });
    while (hooks.length === before) await new Promise((r) => setTimeout(r, 50));
    if (what === "LEAK") assert.match(hooks.at(-1)!, /\[redacted\]/);
    clean(`webhook ${what}`, hooks.at(-1)!);
  }
});

test("a tool result carrying the key reaches the model redacted", async () => {
  model.script(
    {
      when: "CTX",
      toolCalls: [{ name: "write_file", args: { file_path: "/notes.md", content: `the key is ${KEY}` } }],
    },
    {
      when: (r) => r.messages.at(-1)?.role === "tool" && !r.messages.some((m) => m.content.includes("the key is")),
      toolCalls: [{ name: "read_file", args: { file_path: "/notes.md" } }],
    },
    { when: (r) => r.messages.at(-1)?.role === "tool", text: "noted" },
  );
  const seen = model.requests.length;
  await call("POST", "/runs/wait", { assistant_id: assistantId, input: input("CTX") });
  const context = model.requests.slice(seen).flatMap((r) =>
    r.messages.filter((m) => m.role === "tool").map((m) => m.content)
  ).join("\n");
  assert.match(context, /the key is \[redacted\]/, `the model read the file back: ${context}`);
  clean("model context", context);
});

test("the server's stdout and stderr", () => {
  assert.ok(dev.output().length > 0);
  clean("stdout/stderr", dev.output());
});
