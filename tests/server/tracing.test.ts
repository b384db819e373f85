/**
 * Tracing with the standard OpenTelemetry variables: a run of a real LangChain agent (ChatOpenAI
 * against the model server, a `lookup` tool and a `task` tool that runs a nested model call as
 * a subagent does) is exported by OpenTelemetry's SDK over OTLP/HTTP to a local listener, whose
 * protobuf bodies the test decodes: the run's span, its model calls with token counts, its tool
 * calls and the subagent's call under the `task` span, in one trace, tagged with the tracing
 * project; neither the API key nor the user's message is in any span.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { z } from "zod";
import { otlpTracesUrl, runTracerFromEnv } from "../../core/engine/tracing/tracing.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

const API_KEY = "sk-tracing-secret-0123456789abcdef";
const USER_TEXT = "my private question about zebras";

// --- a minimal protobuf reader: enough of OTLP's ExportTraceServiceRequest to assert on ---
type Field = { no: number; wire: number; bytes?: Uint8Array; int?: bigint };
function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n;; shift += 7n) {
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, int: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) (out.push({ no, wire, bytes: buf.subarray(i, i + 8) }), i += 8);
    else if (wire === 5) (out.push({ no, wire, bytes: buf.subarray(i, i + 4) }), i += 4);
    else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}
const subs = (buf: Uint8Array, no: number) => fields(buf).filter((f) => f.no === no).map((f) => f.bytes!);
const text = (buf: Uint8Array, no: number) => new TextDecoder().decode(subs(buf, no)[0] ?? new Uint8Array());
const hex = (buf: Uint8Array, no: number) => Buffer.from(subs(buf, no)[0] ?? []).toString("hex");
function attributes(buf: Uint8Array, no: number): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of subs(buf, no)) {
    const value = fields(subs(kv, 2)[0] ?? new Uint8Array())[0];
    if (!value) continue;
    const v = value.no === 1
      ? new TextDecoder().decode(value.bytes)
      : value.no === 2
      ? value.int === 1n
      : value.no === 3
      ? Number(value.int)
      : value.no === 4
      ? Buffer.from(value.bytes!).readDoubleLE(0)
      : "?";
    out[text(kv, 1)] = v;
  }
  return out;
}
interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentId: string;
  name: string;
  attrs: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}
function decodeRequest(body: Uint8Array): DecodedSpan[] {
  const spans: DecodedSpan[] = [];
  for (const rs of subs(body, 1)) {
    const resource = attributes(subs(rs, 1)[0] ?? new Uint8Array(), 1);
    for (const ss of subs(rs, 2)) {
      for (const s of subs(ss, 2)) {
        spans.push({
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentId: hex(s, 4),
          name: text(s, 5),
          attrs: attributes(s, 9),
          resource,
        });
      }
    }
  }
  return spans;
}

let models: ModelServer;
let receiver: Server;
const bodies: Uint8Array[] = [];
let t: TestServer;

before(async () => {
  models = await startModelServer();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (
        req.method === "POST" && req.url === "/v1/traces" && req.headers["content-type"] === "application/x-protobuf"
      ) bodies.push(new Uint8Array(Buffer.concat(chunks)));
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const model = () =>
    new ChatOpenAI({ model: "gpt-test", apiKey: API_KEY, configuration: { baseURL: models.openaiBaseUrl } });
  const lookup = tool(async ({ q }) => `result for ${q}`, {
    name: "lookup",
    description: "Looks something up",
    schema: z.object({ q: z.string() }),
  });
  const task = tool(
    async ({ description }, config) => (await model().invoke(`subagent: ${description}`, config)).content as string,
    {
      name: "task",
      description: "Runs a subagent",
      schema: z.object({ description: z.string(), subagent_type: z.string() }),
    },
  );
  const graph = createAgent({ model: model(), tools: [lookup, task] });
  const tracer = await runTracerFromEnv(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_SERVICE_NAME: "svc-test",
      AGENTCLI_TRACING_PROJECT: "project-x",
    },
    { agent: "agent" },
  );
  t = await startTestServer({ graphs: { agent: async () => graph }, tracer });
});
after(async () => {
  await t?.close();
  await models?.close();
  receiver?.close();
});

test("a run's spans reach the OTLP listener: run, model calls with tokens, tools, the subagent under task", async () => {
  models.script(
    {
      toolCalls: [{ name: "lookup", args: { q: "zebras" } }, {
        name: "task",
        args: { description: "dig deeper", subagent_type: "researcher" },
      }],
      when: USER_TEXT,
    },
    { text: "found it", when: "subagent: dig deeper" },
    { text: "all done", when: (r) => r.messages.some((m) => m.content.includes("found it")) },
  );
  const thread = await t.client.threads.create();
  const run = await t.client.runs.create(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content: USER_TEXT }] },
  });
  await t.client.runs.join(thread.thread_id, run.run_id);
  assert.equal((await t.client.runs.get(thread.thread_id, run.run_id)).status, "success");
  const info = await (await fetch(`${t.url}/info`)).json() as { tracing: unknown };
  assert.deepEqual(info.tracing, { exporter: "otlp", project: "project-x" });
  await t.server.close(); // flushes the exporter

  assert.ok(bodies.length > 0, "the listener received OTLP protobuf requests");
  const spans = bodies.flatMap(decodeRequest);
  const root = spans.find((s) => s.name === "run agent");
  assert.ok(root, `a run span among ${spans.map((s) => s.name).join(", ")}`);
  assert.equal(root.attrs["agentcli.run_id"], run.run_id);
  assert.equal(root.attrs["agentcli.thread_id"], thread.thread_id);
  assert.equal(root.attrs["agentcli.run_status"], "success");
  assert.equal(root.resource["service.name"], "svc-test");
  assert.equal(root.resource["agentcli.tracing_project"], "project-x");
  const trace = spans.filter((s) => s.traceId === root.traceId);
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const ancestors = (s: DecodedSpan) => {
    const out: DecodedSpan[] = [];
    for (let p = byId.get(s.parentId); p; p = byId.get(p.parentId)) out.push(p);
    return out;
  };
  for (const s of trace) if (s !== root) assert.ok(ancestors(s).includes(root), `${s.name} is under the run span`);

  const chats = trace.filter((s) => s.name === "chat gpt-test");
  assert.equal(chats.length, 3, "two calls of the agent's model and one of the subagent's");
  for (const c of chats) {
    assert.equal(c.attrs["gen_ai.usage.input_tokens"], 10);
    assert.equal(c.attrs["gen_ai.usage.output_tokens"], 5);
    assert.equal(c.attrs["agentcli.usage.total_tokens"], 15);
    assert.equal(c.attrs["gen_ai.operation.name"], "chat");
    assert.equal(c.attrs["gen_ai.request.model"], "gpt-test");
    assert.equal(c.attrs["gen_ai.provider.name"], "openai");
  }
  // The graph's steps are under the graph's span, not flat under the run's.
  const steps = trace.filter((s) => s.attrs["agentcli.node"] === "tools");
  assert.ok(steps.length > 0 && steps.every((s) => s.parentId !== root.spanId), "steps nest under the graph's span");
  assert.ok(trace.some((s) => s.name === "execute_tool lookup"));
  const taskSpan = trace.find((s) => s.name === "execute_tool task");
  assert.equal(taskSpan?.attrs["agentcli.subagent"], "researcher");
  assert.equal(
    chats.filter((c) => ancestors(c).includes(taskSpan!)).length,
    1,
    "the subagent's model call is under the task span",
  );

  const raw = Buffer.concat(bodies.map((b) => Buffer.from(b)));
  assert.ok(!raw.includes(API_KEY), "no API key in any span");
  assert.ok(!raw.includes(USER_TEXT), "no user input in any span");
});

test("with LANGSMITH_TRACING and LANGSMITH_API_KEY, runs trace to LangSmith through LangChain's tracer", async () => {
  const posts: Array<{ path: string; key: string | undefined; body: string }> = [];
  const langsmith = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST") {
        posts.push({
          path: req.url ?? "",
          key: req.headers["x-api-key"] as string | undefined,
          body: Buffer.concat(chunks).toString("utf8"),
        });
      }
      res.writeHead(req.method === "POST" ? 202 : 200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((r) => langsmith.listen(0, "127.0.0.1", r));
  const tracer = await runTracerFromEnv(
    {
      LANGSMITH_TRACING: "true",
      LANGSMITH_API_KEY: "lsv2-test-key",
      LANGSMITH_ENDPOINT: `http://127.0.0.1:${(langsmith.address() as AddressInfo).port}`,
      LANGSMITH_PROJECT: "ls-project",
    },
    { agent: "agent" },
  );
  const s = await startTestServer({ tracer });
  try {
    const info = await (await fetch(`${s.url}/info`)).json() as { tracing: unknown };
    assert.deepEqual(info.tracing, { exporter: "langsmith", project: "ls-project" });
    const thread = await s.client.threads.create();
    const run = await s.client.runs.create(thread.thread_id, "echo", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    await s.client.runs.join(thread.thread_id, run.run_id);
  } finally {
    await s.close(); // waits for the pending trace batches
    langsmith.close();
  }
  const runs = posts.filter((p) => p.path.startsWith("/runs"));
  assert.ok(runs.length > 0, `LangSmith received runs (got ${posts.map((p) => p.path).join(", ") || "nothing"})`);
  assert.ok(runs.every((p) => p.key === "lsv2-test-key"), "with the key from the server's environment");
  assert.ok(runs.some((p) => p.body.includes("ls-project")), "in the project named by LANGSMITH_PROJECT");
});

test("tracing is off without an endpoint, and OTEL_SDK_DISABLED / OTEL_TRACES_EXPORTER=none turn it off", async () => {
  assert.equal(otlpTracesUrl({}), null);
  assert.equal(await runTracerFromEnv({}, { agent: "a" }), null);
  assert.equal(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318/" }), "http://h:4318/v1/traces");
  assert.equal(
    otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x" }),
    "http://t/x",
  );
  assert.equal(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318", OTEL_SDK_DISABLED: "true" }), null);
  assert.equal(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318", OTEL_TRACES_EXPORTER: "none" }), null);
});
