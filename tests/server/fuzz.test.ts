/**
 * No 5xx from client input on the Agent API: property-based fuzzing (fast-check, fixed seed;
 * `npm run test:fuzz` for the long mode) over every operation of the server's own OpenAPI
 * document, with hostile path segments, queries, headers and bodies (NUL, lone surrogates,
 * bad percent-encoding, invalid UTF-8, wrong types, edge numbers). Path ids are real ones
 * (a thread with a finished run, the default assistant) often enough to get past the 404.
 */
import { after, before, test } from "node:test";
import {
  assertNot5xx,
  fc,
  fillPath,
  fuzzParams,
  hostileBody,
  hostileJson,
  hostileQuery,
  hostileSegment,
  hostileString,
  pathParams,
  rawHttp,
} from "../_fuzz.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
let port: number;
let ops: Array<{ method: string; path: string; hasBody: boolean }>;
let ids: string[];
before(async () => {
  t = await startTestServer({ maxBodyBytes: 256 * 1024 });
  port = Number(new URL(t.url).port);
  const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: unknown }>>;
  };
  ops = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      hasBody: Boolean(op.requestBody),
    }))
  );
  const thread = await t.client.threads.create();
  const run = await t.client.runs.create(thread.thread_id, "echo", {
    input: { messages: [{ role: "user", content: "hi" }] },
  });
  await t.client.runs.join(thread.thread_id, run.run_id);
  const state = await t.client.threads.getState(thread.thread_id);
  const assistant = (await t.client.assistants.search({ graphId: "echo" }))[0]!.assistant_id;
  ids = [thread.thread_id, run.run_id, assistant, String(state.checkpoint?.checkpoint_id ?? "x"), "echo"];
});
after(async () => {
  await t?.close();
});

/** Plausible field values, so hostile ones sit among good ones and reach the handler's deeper checks. */
const fields: Record<string, fc.Arbitrary<unknown>> = {
  assistant_id: fc.constantFrom("echo", "slow", "interrupt", "nope"),
  graph_id: fc.constantFrom("echo", "slow", "nope"),
  input: fc.oneof(
    fc.constant(null),
    fc.record({
      messages: fc.array(fc.record({ role: fc.constantFrom("user", "bogus"), content: hostileString() }), {
        maxLength: 2,
      }),
    }),
  ),
  metadata: fc.dictionary(fc.string({ maxLength: 4 }), hostileJson(), { maxKeys: 2 }),
  limit: fc.integer({ min: -5, max: 5000 }),
  offset: fc.integer({ min: -5, max: 100 }),
  after_seconds: fc.oneof(fc.double({ min: -1, max: 1e12 }), fc.constant(2_147_484)),
  durability: fc.constantFrom("sync", "async", "exit", "bogus"),
  interrupt_before: fc.oneof(fc.constant("*"), fc.array(fc.constantFrom("agent", "nope"), { maxLength: 2 })),
  multitask_strategy: fc.constantFrom("reject", "interrupt", "rollback", "enqueue", "bogus"),
  checkpoint_id: fc.constantFrom("bogus", "1ef00000-0000-6000-8000-000000000000"),
  namespace: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  key: hostileString(),
  value: fc.dictionary(fc.string({ maxLength: 4 }), hostileJson(), { maxKeys: 2 }),
  index: fc.oneof(fc.constant(false), fc.constant("zzz"), fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })),
  ttl: fc.oneof(
    fc.integer({ min: -5, max: 1e9 }),
    fc.constant("bogus"),
    fc.record({ strategy: fc.constantFrom("delete", "bogus"), ttl: fc.integer({ min: -5, max: 100 }) }),
  ),
  keep_latest: fc.integer({ min: -2, max: 5 }),
  thread_ids: fc.array(fc.uuid(), { maxLength: 2 }),
  values: hostileJson(),
  as_node: fc.constantFrom("agent", "__start__", "nope"),
  stream_mode: fc.oneof(
    fc.constantFrom("values", "updates", "bogus"),
    fc.array(fc.constantFrom("values", "messages-tuple", "bogus"), { maxLength: 2 }),
  ),
  version: fc.integer({ min: -1, max: 5 }),
};

const request = fc.record({
  op: fc.nat(),
  segments: fc.array(hostileSegment(fc.oneof(fc.constantFrom("ID0", "ID1", "ID2", "ID3", "ID4"), fc.uuid())), {
    minLength: 3,
    maxLength: 3,
  }),
  query: hostileQuery([
    "limit",
    "offset",
    "wait",
    "action",
    "namespace",
    "key",
    "cancel_on_disconnect",
    "status",
    "subgraphs",
  ]),
  body: hostileBody(fields),
  contentType: fc.oneof(
    { weight: 5, arbitrary: fc.constant("application/json") },
    fc.constantFrom("application/json; charset=latin1", "text/plain", "application/json\u0000"),
  ),
  // deno-lint-ignore no-control-regex
  lastEventId: fc.option(hostileString().map((s) => s.replace(/[\r\n\u0000-\u001f\u007f-\uffff]/g, "?")), {
    nil: undefined,
  }),
});

test("no operation of the Agent API answers 5xx to hostile paths, queries, headers or bodies", async () => {
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const op = ops[r.op % ops.length]!;
      const segments = r.segments.slice(0, pathParams(op.path)).map((s) =>
        s.replace(/^ID(\d)$/, (_, i) => ids[Number(i)]!)
      );
      const target = `${fillPath(op.path, segments)}${r.query ? `?${r.query}` : ""}`;
      const headers: Record<string, string> = {};
      if (r.lastEventId !== undefined) headers["last-event-id"] = r.lastEventId;
      const send = op.hasBody || op.method === "POST" || op.method === "PUT" || op.method === "PATCH";
      if (send) headers["content-type"] = r.contentType.replace("\u0000", "");
      const res = await rawHttp(port, {
        method: op.method,
        target,
        headers,
        body: send ? r.body : undefined,
        timeoutMs: 20_000,
      });
      assertNot5xx(
        res,
        `${op.method} ${target} ${
          send ? (typeof r.body === "string" ? r.body.slice(0, 300) : `<${r.body.length} bytes>`) : ""
        }`,
      );
    }),
    fuzzParams(300),
  );
});
