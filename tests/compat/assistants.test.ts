/**
 * Compatibility (see _target.ts): what a graph module may export (a compiled graph, an
 * uncompiled StateGraph, an async factory called per run with the run config) and the
 * schemas of `/assistants/{id}/schemas` (zod state and context schemas; an Annotation graph).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTarget, type Target } from "./_target.ts";

let t: Target;
before(async () => (t = await startTarget()));
after(async () => await t?.close());

describe("graph exports", () => {
  test("an uncompiled StateGraph is compiled by the server", async () => {
    const th = await t.client.threads.create();
    assert.deepEqual(await t.client.runs.wait(th.thread_id, "uncompiled", { input: {} }), { done: true });
  });

  test("an async factory is called per run with the run config", async () => {
    const mine = await t.client.assistants.create({ graphId: "factory", name: "compat-factory" });
    const th = await t.client.threads.create();
    assert.deepEqual(await t.client.runs.wait(th.thread_id, mine.assistant_id, { input: {} }), {
      made_for: mine.assistant_id,
    });
    const other = await t.client.assistants.create({ graphId: "factory", name: "compat-factory-2" });
    const th2 = await t.client.threads.create();
    assert.deepEqual(await t.client.runs.wait(th2.thread_id, other.assistant_id, { input: {} }), {
      made_for: other.assistant_id,
    });
    assert.deepEqual((await t.client.threads.getState(th.thread_id)).values, { made_for: mine.assistant_id });
  });
});

describe("schemas", () => {
  test("a zod graph reports its state, input, output and context JSON Schemas", async () => {
    const s = await t.client.assistants.getSchemas("typed");
    assert.equal(s.graph_id, "typed");
    const state = s.state_schema as { properties: Record<string, { type?: string }>; required?: string[] };
    assert.equal(state.properties.topic?.type, "string");
    assert.equal(state.properties.score?.type, "number");
    const input = s.input_schema as { properties: Record<string, unknown> };
    assert.ok("topic" in input.properties);
    const context = s.context_schema as { properties: Record<string, { type?: string }> } | null;
    assert.equal(context?.properties.model?.type, "string");
  });

  test("an Annotation graph's schemas name its state keys", async () => {
    const s = await t.client.assistants.getSchemas("chain");
    assert.equal(s.graph_id, "chain");
    // LangGraph's server reads the types from the TypeScript source; we list the state keys
    // with any JSON (README: differences). Both name the keys.
    assert.ok("log" in ((s.state_schema as { properties: object }).properties));
    assert.ok("log" in ((s.input_schema as { properties: object }).properties));
  });
});

describe("subgraphs", () => {
  test("GET /assistants/{id}/subgraphs answers LangGraph JS's shape: per namespace { state, input, output, config }", async () => {
    const [a] = await t.client.assistants.search({ graphId: "parent", limit: 1 });
    // The SDK's type says { graph_id, input_schema, ... }; LangGraph JS answers the shape below.
    const res: Record<string, object> = await t.client.assistants.getSubgraphs(a!.assistant_id);
    assert.deepEqual(Object.keys(res), ["child"]);
    const child = res.child!;
    assert.ok(!("input_schema" in child) && !("graph_id" in child), JSON.stringify(child));
    assert.ok(
      Object.keys(child).every((k) => ["state", "input", "output", "config"].includes(k)),
      JSON.stringify(child),
    );
    const { state } = child as { state?: { properties?: Record<string, unknown> } };
    assert.ok(state?.properties && "items" in state.properties, JSON.stringify(child));
    const one = await t.client.assistants.getSubgraphs(a!.assistant_id, { namespace: "child" });
    assert.deepEqual(Object.keys(one), ["child"]);
  });
});

describe("context", () => {
  test("a graph with a context Annotation: the run's context reaches it; its context_schema", async () => {
    const th = await t.client.threads.create();
    const out = await t.client.runs.wait(th.thread_id, "context", { input: {}, context: { user_name: "ada" } });
    assert.deepEqual(out, { greeting: "hi ada" });
    const [a] = await t.client.assistants.search({ graphId: "context", limit: 1 });
    const schemas = await t.client.assistants.getSchemas(a!.assistant_id);
    if (t.name === "peer") {
      // LangGraph's dev server parses the TypeScript source for the Annotation's fields.
      const props = (schemas.context_schema as { properties?: Record<string, unknown> } | null)?.properties;
      assert.ok(props && "user_name" in props, JSON.stringify(schemas.context_schema));
    } else {
      // Ours: an Annotation context leaves nothing at run time to read (a zod or StateSchema context does).
      assert.equal(schemas.context_schema, null);
    }
  });
});

describe("error bodies", () => {
  test("a missing assistant is a 404: LangGraph's body is its message, ours JSON with the message, code and hint", async () => {
    const res = await fetch(`${t.url}/assistants/${crypto.randomUUID()}`);
    assert.equal(res.status, 404);
    const text = await res.text();
    if (t.name === "peer") {
      assert.equal(text, "Assistant not found");
    } else {
      const body = JSON.parse(text) as { detail: string; code: string; hint: string };
      assert.match(body.detail, /^Assistant ".+" not found$/);
      assert.equal(body.code, "NOT_FOUND");
      assert.equal(typeof body.hint, "string");
    }
  });
});
