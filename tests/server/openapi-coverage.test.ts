/**
 * /openapi.json describes every route the Agent API serves (so a route added later cannot be
 * left out of the document), with the request body schema of every route that reads one
 * being the zod schema its handler validates with.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import * as s from "../../core/server/http/schemas.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
let doc: { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>> };
before(async () => {
  t = await startTestServer();
  doc = await (await fetch(`${t.url}/openapi.json`)).json() as typeof doc;
});
after(async () => {
  await t?.close();
});

test("every served route (method and path) is an operation of /openapi.json", () => {
  const served = t.server.app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:\w+/g, "{}").replace(/(.)\/$/, "$1")}`);
  assert.ok(served.length > 40, `the server lists its routes (${served.length})`);
  // Parameter names may differ (a route's `:id` is the document's `{assistant_id}`): compared as `{}`.
  const documented = new Set(
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m} ${path.replace(/\{\w+\}/g, "{}")}`)
    ),
  );
  const missing = [...new Set(served)].filter((r) => !documented.has(r));
  assert.deepEqual(
    missing,
    [],
    "routes served but not in /openapi.json (add them to OPERATIONS in core/server/http/openapi.ts)",
  );
});

test("a body's documented schema is the JSON Schema of the zod schema that validates it", () => {
  const body = doc.paths["/threads"]!.post!.requestBody!.content["application/json"]!.schema as {
    properties: Record<string, unknown>;
    required?: string[];
  };
  assert.deepEqual(Object.keys(body.properties).sort(), Object.keys(s.threadCreate.shape).sort());
  const cron = doc.paths["/runs/crons"]!.post!.requestBody!.content["application/json"]!.schema as {
    required?: string[];
  };
  const required = Object.entries(s.cronCreate.shape).filter(([, v]) => !(v as z.ZodType).safeParse(undefined).success)
    .map(([k]) => k).sort();
  assert.deepEqual([...(cron.required ?? [])].sort(), required);
});
