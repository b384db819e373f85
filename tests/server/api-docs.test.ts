/**
 * `/docs` (the API reference: Swagger UI, bundled, on `/openapi.json`) and `/favicon.ico` on an
 * agent server with auth: public static files, served from the built UI, with safe paths; the
 * API itself still needs credentials.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { userError } from "../../core/kernel/errors.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
before(async () => {
  t = await startTestServer({
    authenticate: async (req) => {
      const auth = req.headers.get("authorization");
      if (!auth) throw userError("UNAUTHORIZED", { message: "Cannot authenticate the request: no bearer token" });
      return { identity: auth.replace(/^Bearer /, ""), isAuthenticated: true };
    },
  });
});
after(async () => {
  await t?.close();
});

test("/docs is public: the reference page loads Swagger UI from this server, on /openapi.json", async () => {
  const res = await fetch(`${t.url}/docs`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  const html = await res.text();
  assert.match(html, /<script src="\/docs\/swagger-ui-bundle\.js"><\/script>/);
  assert.match(html, /<link rel="stylesheet" href="\/docs\/swagger-ui\.css" \/>/);
  assert.doesNotMatch(html, /https?:\/\//, "nothing is loaded from another host (no CDN)");
  const init = await (await fetch(`${t.url}/docs/init.js`)).text();
  assert.match(init, /url: "\/openapi\.json"/);
  const bundle = await fetch(`${t.url}/docs/swagger-ui-bundle.js`);
  assert.equal(bundle.status, 200);
  assert.match(bundle.headers.get("content-type") ?? "", /^text\/javascript/);
  assert.match(await bundle.text(), /SwaggerUIBundle/);
  const css = await fetch(`${t.url}/docs/swagger-ui.css`);
  assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
  await css.arrayBuffer();
});

test("the API behind the reference still needs credentials", async () => {
  const res = await fetch(`${t.url}/threads/search`, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "application/json" },
  });
  assert.equal(res.status, 401);
  await res.arrayBuffer();
  const ok = await fetch(`${t.url}/threads/search`, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "application/json", authorization: "Bearer alice" },
  });
  assert.equal(ok.status, 200);
  await ok.arrayBuffer();
});

test("/favicon.ico is the UI's SVG icon", async () => {
  const res = await fetch(`${t.url}/favicon.ico`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "image/svg+xml");
  assert.match(await res.text(), /^<svg /);
});

test("/docs serves only its own files: unknown names and other paths are 404s, never the page", async () => {
  for (const path of ["/docs/nope.js", "/docs/..%2Fmanifest.json", "/docs/%2e%2e", "/docs/.hidden"]) {
    const res = await fetch(`${t.url}${path}`);
    assert.ok(res.status === 404 || res.status === 401, `${path}: ${res.status}`);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/, path);
    await res.arrayBuffer();
  }
});

test("/openapi.json lists /docs and /favicon.ico as public operations", async () => {
  const doc = await (await fetch(`${t.url}/openapi.json`)).json() as {
    paths: Record<string, { get?: { security?: unknown[] } }>;
  };
  for (const p of ["/docs", "/docs/{file}", "/favicon.ico"]) assert.deepEqual(doc.paths[p]?.get?.security, [], p);
});
