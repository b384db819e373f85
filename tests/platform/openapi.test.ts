/**
 * The control plane's `/openapi.json` (generated from its zod schemas) describes every route it
 * serves, with the body schema each handler validates with; `/docs` shows it (Swagger UI,
 * bundled) without an API key, while the API itself still needs one.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { DEPLOYMENT_BODIES } from "../../core/platform/routes/deployments.ts";
import { ListenerPatchBody } from "../../core/platform/api/schema.ts";
import { startTestPlatform, type TestPlatform } from "./_harness.ts";

type Doc = {
  openapi: string;
  info: { title: string };
  components: { securitySchemes: Record<string, { in?: string; name?: string }> };
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown[];
        requestBody?: {
          content: Record<string, { schema: { properties: Record<string, unknown>; required?: string[] } }>;
        };
      }
    >
  >;
};

let p: TestPlatform;
let doc: Doc;
before(async () => {
  p = await startTestPlatform();
  const res = await p.call("GET", "/openapi.json", { key: null });
  assert.equal(res.status, 200, "the document needs no key");
  doc = res.body as Doc;
});
after(async () => {
  await p?.close();
});

test("an OpenAPI 3.1 document of the control plane, authenticated by X-Api-Key", () => {
  assert.equal(doc.openapi, "3.1.0");
  assert.match(doc.info.title, /control plane/);
  assert.deepEqual(doc.components.securitySchemes.apiKey, {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "A control-plane API key of your tenant.",
  });
});

test("every route the control plane serves (method and path) is an operation of /openapi.json", () => {
  const served = p.platform.app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) =>
      `${r.method.toLowerCase()} ${r.path.replace(/:\w+/g, "{}").replace(/\*$/, "{}").replace(/(.)\/$/, "$1")}`
    );
  assert.ok(served.length > 30, `the control plane lists its routes (${served.length})`);
  const documented = new Set(
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m} ${path.replace(/\{\w+\}/g, "{}")}`)
    ),
  );
  const missing = [...new Set(served)].filter((r) => !documented.has(r));
  assert.deepEqual(
    missing,
    [],
    "routes served but not in /openapi.json (add them to OPERATIONS in core/platform/api/openapi.ts)",
  );
});

test("a body's documented schema is the JSON Schema of the zod schema that validates it", () => {
  const create = doc.paths["/v2/deployments"]!.post!.requestBody!.content["application/json"]!.schema;
  assert.deepEqual(Object.keys(create.properties).sort(), Object.keys(DEPLOYMENT_BODIES.CreateBody.shape).sort());
  const required = Object.entries(DEPLOYMENT_BODIES.CreateBody.shape).filter(([, v]) =>
    !(v as z.ZodType).safeParse(undefined).success
  ).map(([k]) => k).sort();
  assert.deepEqual([...(create.required ?? [])].sort(), required);
  const listener = doc.paths["/v2/listeners/{listener_id}"]!.patch!.requestBody!.content["application/json"]!.schema;
  assert.deepEqual(Object.keys(listener.properties).sort(), Object.keys(ListenerPatchBody.shape).sort());
  assert.equal(
    doc.paths["/v2/deployments"]!.get!.security,
    undefined,
    "the API's operations take the document's X-Api-Key",
  );
  assert.deepEqual(doc.paths["/docs"]!.get!.security, [], "the reference is public");
});

test("/docs and /favicon.ico need no key; the API they call still does", async () => {
  const page = await p.platform.app.request("/docs");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /swagger-ui-bundle\.js/);
  const icon = await p.platform.app.request("/favicon.ico");
  assert.equal(icon.status, 200);
  assert.equal(icon.headers.get("content-type"), "image/svg+xml");
  await icon.arrayBuffer();
  assert.equal((await p.call("GET", "/v2/deployments", { key: null })).status, 401);
  assert.equal((await p.call("GET", "/v2/deployments")).status, 200);
});
