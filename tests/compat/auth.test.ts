/**
 * Compatibility (see _target.ts) of LangGraph custom auth (`auth.path` of langgraph.json, the
 * fixture tests/fixtures/auth/compat-auth.ts): what each server does with the filters a handler
 * returns and which events a request raises, side by side (`--peer`: `langgraph-cli dev` with
 * the same auth module).
 * - store: a handler's filter applies to the item (`{ ...value, namespace, key }`) on get, put,
 *   delete, search and namespace listing: another user's item is 404, writing an item the
 *   filter would not let the writer see is 403;
 * - `/runs/batch` raises `threads:create_run` once per item, each with its own value; a
 *   stateless run's filters do not hide the graph's own assistant from it;
 * - a run on another user's thread is 404; copying it differs (409 there, 404 here);
 * - creating a thread or assistant whose id exists but is filtered away is 409;
 * - joining a run's stream raises `threads:read` of its thread; another user's streams a
 *   not-found error event (the stream opens, as for a run that does not exist);
 * - a request marked as LangGraph Studio's (`x-auth-scheme: langsmith`) skips `authenticate`
 *   and reaches the handlers as the Studio user, unless `auth.disable_studio_auth` is set.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { collect } from "../server/_harness.ts";
import { startTarget, type Target } from "./_target.ts";

const MODULE = resolve(import.meta.dirname, "../fixtures/auth/compat-auth.ts");
const dir = mkdtempSync(join(tmpdir(), "agentcli-compat-auth-"));
const LOG = join(dir, "events.jsonl");
process.env.COMPAT_AUTH_LOG = LOG;

let t: Target;
let alice: Client;
let bob: Client;
const as = (token: string) =>
  new Client({
    apiUrl: t.url,
    apiKey: null,
    defaultHeaders: { authorization: `Bearer ${token}` },
    callerOptions: { maxRetries: 0 },
  });

before(async () => {
  writeFileSync(LOG, "");
  t = await startTarget({ auth: { module: MODULE, exportName: "auth" } });
  alice = as("token-alice");
  bob = as("token-bob");
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Event {
  event: string;
  identity: string;
  thread_id?: string;
  metadata?: Record<string, unknown>;
}

/** The events raised while `fn` ran. */
async function eventsOf(fn: () => Promise<unknown>): Promise<Event[]> {
  writeFileSync(LOG, "");
  await fn();
  return readFileSync(LOG, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Event);
}

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

describe("store: a handler's filter applies to the item", () => {
  test("get, put and delete of another user's item are 404; a write the writer could not see is 403", async () => {
    const ns = ["shared", randomUUID().slice(0, 8)];
    await alice.store.putItem(ns, "a", { owner: "alice", v: 1 });
    assert.deepEqual((await alice.store.getItem(ns, "a"))?.value, { owner: "alice", v: 1 });
    assert.equal(await status(bob.store.getItem(ns, "a")), 404);
    assert.equal(await status(bob.store.putItem(ns, "a", { owner: "bob" })), 404);
    assert.equal(await status(bob.store.deleteItem(ns, "a")), 404);
    assert.equal(await status(bob.store.putItem(ns, "b", { v: 2 })), 403);
    assert.equal(await bob.store.getItem(ns, "b"), null);
    await bob.store.putItem(ns, "b", { owner: "bob" });
    assert.deepEqual((await alice.store.getItem(ns, "a"))?.value, { owner: "alice", v: 1 });
  });

  test("a get reads the namespace its handler rewrote", async () => {
    const tag = randomUUID().slice(0, 8);
    await alice.store.putItem(["alice", tag], "k", { owner: "alice", v: 3 });
    assert.deepEqual((await alice.store.getItem(["me", tag], "k"))?.value, { owner: "alice", v: 3 });
    assert.equal(await bob.store.getItem(["me", tag], "k"), null);
  });

  test("search lists only the items the filter passes, paged after filtering", async () => {
    const ns = ["paged", randomUUID().slice(0, 8)];
    for (let i = 0; i < 3; i++) await bob.store.putItem(ns, `b${i}`, { owner: "bob", i });
    for (let i = 0; i < 3; i++) await alice.store.putItem(ns, `a${i}`, { owner: "alice", i });
    const all = await alice.store.searchItems(ns, { limit: 10 });
    assert.deepEqual(all.items.map((x) => x.key).sort(), ["a0", "a1", "a2"]);
    const page = await alice.store.searchItems(ns, { limit: 2, offset: 1 });
    assert.equal(page.items.length, 2);
    assert.ok(page.items.every((x) => (x.value as { owner: string }).owner === "alice"));
  });

  test("namespace listing keeps the namespaces the filter passes", async () => {
    const tag = randomUUID().slice(0, 8);
    await alice.store.putItem(["alice", tag], "k", { owner: "alice" });
    await bob.store.putItem(["bob", tag], "k", { owner: "bob" });
    const seen = (await alice.store.listNamespaces({ suffix: [tag] })).namespaces;
    assert.deepEqual(seen, [["alice", tag]]);
  });
});

describe("events and filters on runs and creates", () => {
  test("/runs/batch raises threads:create_run per item, each rewriting its own run's metadata", async () => {
    const events = await eventsOf(async () => {
      const res = await fetch(`${t.url}/runs/batch`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer token-alice" },
        body: JSON.stringify([
          { assistant_id: "chain", input: {}, metadata: { n: 1 } },
          { assistant_id: "chain", input: {}, metadata: { n: 2 } },
        ]),
      });
      assert.equal(res.status, 200, await res.clone().text());
      const runs = await res.json() as { metadata: Record<string, unknown> }[];
      assert.deepEqual(runs.map((r) => [r.metadata.n, r.metadata.owner]).sort(), [[1, "alice"], [2, "alice"]]);
    });
    const runs = events.filter((e) => e.event === "threads:create_run");
    assert.deepEqual(runs.map((e) => e.metadata?.n).sort(), [1, 2]);
  });

  test("a stateless run under a filtering handler runs on the graph's own assistant", async () => {
    const events = await eventsOf(async () => {
      assert.deepEqual(await alice.runs.wait(null, "chain", { input: {}, metadata: { n: 3 } }), {
        log: ["a", "b", "c"],
      });
    });
    const run = events.find((e) => e.event === "threads:create_run");
    assert.equal(run?.metadata?.n, 3);
  });

  test("creating a thread whose id exists but is filtered away is 409, whatever if_exists says", async () => {
    const threadId = randomUUID();
    await alice.threads.create({ threadId });
    assert.equal(await status(bob.threads.create({ threadId })), 409);
    assert.equal(await status(bob.threads.create({ threadId, ifExists: "do_nothing" })), 409);
    assert.equal((await alice.threads.create({ threadId, ifExists: "do_nothing" })).thread_id, threadId);
    assert.equal(await status(alice.threads.create({ threadId })), 409);
  });

  test("creating an assistant whose id exists but is filtered away is 409, whatever if_exists says", async () => {
    const assistantId = randomUUID();
    await alice.assistants.create({ graphId: "chain", assistantId });
    assert.equal(await status(bob.assistants.create({ graphId: "chain", assistantId })), 409);
    assert.equal(await status(bob.assistants.create({ graphId: "chain", assistantId, ifExists: "do_nothing" })), 409);
    const same = await alice.assistants.create({ graphId: "chain", assistantId, ifExists: "do_nothing" });
    assert.equal(same.assistant_id, assistantId);
  });

  test("a run on another user's thread is 404; copying it is 409 on LangGraph's, 404 on ours", async () => {
    const th = await alice.threads.create();
    assert.equal(await status(bob.runs.create(th.thread_id, "chain", { input: {} })), 404);
    // LangGraph's dev server answers a copy of a thread it cannot find (hidden or missing) 409
    // "Thread not found"; ours 404, as every other request naming a thread it hides.
    assert.equal(await status(bob.threads.copy(th.thread_id)), t.name === "peer" ? 409 : 404);
    assert.equal(await status(alice.threads.copy(randomUUID())), t.name === "peer" ? 409 : 404);
  });

  test("joining a run's stream raises threads:read of its thread", async () => {
    const th = await alice.threads.create();
    const run = await alice.runs.create(th.thread_id, "chain", { input: {} });
    const events = await eventsOf(async () => {
      for await (const _ of alice.runs.joinStream(th.thread_id, run.run_id)) { /* to the end */ }
    });
    assert.ok(
      events.some((e) => e.event === "threads:read" && e.thread_id === th.thread_id && e.identity === "alice"),
      JSON.stringify(events),
    );
  });

  test("joining the stream of another user's run streams a not-found error", async () => {
    const th = await alice.threads.create();
    const run = await alice.runs.create(th.thread_id, "chain", { input: {} });
    await alice.runs.join(th.thread_id, run.run_id);
    const events = await collect(bob.runs.joinStream(th.thread_id, run.run_id));
    assert.deepEqual(events.map((e) => e.event), ["error"]);
    assert.equal((events[0]!.data as { message: string }).message, "404: Thread not found");
  });
});

describe("public paths", () => {
  test("/info answers without credentials; /ok too on ours (the health check), not on LangGraph's", async () => {
    assert.equal((await fetch(`${t.url}/info`)).status, 200);
    assert.equal((await fetch(`${t.url}/ok`)).status, t.name === "peer" ? 401 : 200);
  });
});

describe("LangGraph Studio's requests", () => {
  test("a request marked x-auth-scheme: langsmith skips authenticate and meets the handlers as the Studio user", async () => {
    const events = await eventsOf(async () => {
      const res = await fetch(`${t.url}/threads/search`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-auth-scheme": "langsmith" },
        body: "{}",
      });
      assert.equal(res.status, 200, await res.clone().text());
    });
    assert.deepEqual(events.map((e) => [e.event, e.identity]), [["threads:search", "studio:langgraph-studio-user"]]);
  });
});

describe("LangGraph Studio's requests with auth.disable_studio_auth", () => {
  let strict: Target;
  before(async () => {
    strict = await startTarget({ auth: { module: MODULE, exportName: "auth", disableStudioAuth: true } });
  });
  after(async () => await strict?.close());

  test("a request marked x-auth-scheme: langsmith goes through authenticate like any other", async () => {
    const res = await fetch(`${strict.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-auth-scheme": "langsmith" },
      body: "{}",
    });
    assert.equal(res.status, 401);
    const ok = await fetch(`${strict.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-auth-scheme": "langsmith", authorization: "Bearer token-bob" },
      body: "{}",
    });
    assert.equal(ok.status, 200);
  });
});
