/**
 * Requests the Agent API refuses before they reach storage or a graph, each with a 4xx and a
 * message (never a 500): text PostgreSQL cannot store, bodies not sent as JSON (what a
 * browser on another site could send without asking), oversized and over-deep bodies, and
 * state updates the graph rejects or that name a checkpoint that does not exist.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startTestServer, type TestServer } from "./_harness.ts";

let t: TestServer;
before(async () => {
  t = await startTestServer({ maxBodyBytes: 64 * 1024 });
});
after(async () => {
  await t?.close();
});

async function call(
  method: string,
  path: string,
  body?: string,
  type = "application/json",
): Promise<{ status: number; detail: string }> {
  const res = await fetch(`${t.url}${path}`, {
    method,
    body,
    headers: body === undefined ? {} : { "content-type": type },
  });
  const json = (await res.json().catch(() => ({}))) as { detail?: string };
  return { status: res.status, detail: json.detail ?? "" };
}

test("NUL characters and unpaired surrogates are a 422 naming where they are, in bodies, ids and queries", async () => {
  const th = await t.client.threads.create();
  const run = await call(
    "POST",
    `/threads/${th.thread_id}/runs/wait`,
    JSON.stringify({ assistant_id: "echo", input: { messages: [{ role: "user", content: "a\u0000b" }] } }),
  );
  assert.equal(run.status, 422);
  assert.match(run.detail, /input\.messages\[0\]\.content contains a NUL character/);
  const meta = await call("POST", "/threads", '{"metadata":{"x":"\\ud800"}}');
  assert.equal(meta.status, 422);
  assert.match(meta.detail, /metadata\.x contains an unpaired UTF-16 surrogate/);
  const key = await call("PUT", "/store/items", JSON.stringify({ namespace: ["a"], key: "k\u0000", value: {} }));
  assert.equal(key.status, 422);
  assert.equal((await call("GET", "/threads/a%00b")).status, 422);
  assert.equal((await call("GET", "/store/items?namespace=a&key=k%00")).status, 422);
  // Ordinary text, emoji (paired surrogates) included, still goes through.
  assert.equal((await call("POST", "/threads", JSON.stringify({ metadata: { x: "ok 😀" } }))).status, 200);
});

test("a body not sent as JSON is a 415, and no run is created", async () => {
  const before = (await t.client.runs.list((await t.client.threads.create()).thread_id)).length;
  assert.equal(before, 0);
  for (const type of ["text/plain", "application/x-www-form-urlencoded", ""]) {
    const r = await call("POST", "/runs/wait", '{"assistant_id":"echo","input":null}', type);
    assert.equal(r.status, 415, type);
    assert.match(r.detail, /not JSON/);
  }
  assert.equal((await call("POST", "/threads/search", "{}", "application/json; charset=utf-8")).status, 200);
});

test("an oversized body is a 413 naming the limit; over-deep JSON is a 422", async () => {
  const big = await call("POST", "/threads", JSON.stringify({ metadata: { x: "a".repeat(100 * 1024) } }));
  assert.equal(big.status, 413);
  assert.match(big.detail, /too large/);
  const deep = await call("POST", "/threads", `{"metadata":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}}`);
  assert.equal(deep.status, 422);
  assert.match(deep.detail, /nests deeper than 100 levels/);
});

test("state updates the graph refuses are a 422; unknown checkpoints are a 404", async () => {
  const th = await t.client.threads.create();
  await t.client.runs.wait(th.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] } });
  const values = await call("POST", `/threads/${th.thread_id}/state`, '{"values":5}');
  assert.equal(values.status, 422, values.detail);
  const node = await call(
    "POST",
    `/threads/${th.thread_id}/state`,
    '{"values":{"messages":[]},"as_node":"nonexistent"}',
  );
  assert.equal(node.status, 422, node.detail);
  assert.match(node.detail, /nonexistent/);
  assert.equal((await call("GET", `/threads/${th.thread_id}/state/abc`)).status, 404);
  assert.equal(
    (await call("POST", `/threads/${th.thread_id}/state/checkpoint`, '{"checkpoint":{"checkpoint_id":"abc"}}')).status,
    404,
  );
  assert.equal(
    (await call("POST", `/threads/${th.thread_id}/state`, '{"checkpoint_id":"zzz","values":{"messages":[]}}')).status,
    404,
  );
  // A real checkpoint still reads.
  const state = await t.client.threads.getState(th.thread_id);
  const cp = state.checkpoint.checkpoint_id!;
  assert.equal((await call("GET", `/threads/${th.thread_id}/state/${cp}`)).status, 200);
});

test("listing a thread's runs checks limit, offset and status", async () => {
  const th = await t.client.threads.create();
  for (const q of ["limit=-1", "limit=1e999", "offset=abc", "status=zzz"]) {
    const r = await call("GET", `/threads/${th.thread_id}/runs?${q}`);
    assert.equal(r.status, 422, q);
  }
  assert.equal((await call("GET", `/threads/${th.thread_id}/runs?limit=5&offset=0&status=success`)).status, 200);
  assert.deepEqual(await t.client.runs.list(th.thread_id, { limit: 5, status: "success" }), []);
});
