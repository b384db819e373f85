/**
 * The authorization matrix (README "Who may do what"), walked over every operation of the
 * server's own OpenAPI document (Agent API, MCP, A2A, public documents) with a real identity
 * provider (identity_a, through its local GoTrue stand-in): alice owns an assistant, threads,
 * runs (one finished, one pending), a store item and an A2A task; bob tries every operation
 * on her ids, and the same operation on unknown ids of the same shape. Bob's answers must be
 * identical either way (no existence oracle), never contain her ids or data, and leave all of
 * her resources as they were; the caller without credentials gets 401 on everything but the
 * public paths. The deployment's default assistant is readable and runnable by every user and
 * modifiable by none. A new route without a row here fails the test.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createAuthenticator } from "../../core/auth/index.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { protocolRoutes } from "../../core/server/protocols/routes.ts";
import { VERSION } from "../../core/kernel/version.ts";
import anonymousPlugin from "../../plugins/identity/anonymous.ts";
import identityA from "../../plugins/identity/identity_a.ts";
import { type GoTrueServer, startGoTrue } from "../fixtures/identity-servers/gotrue.ts";
import { testConfig } from "../identity/config.ts";
import { rawHttp, type RawResponse } from "../_fuzz.ts";
import { startTestServer, type TestServer } from "./_harness.ts";

type Ids = { A: string; T: string; R: string; C: string; NS: string; K: string };

/**
 * How each operation is tried. `body`/`query`/`params` may hold `$A` (assistant), `$T`
 * (thread), `$R` (run, also the A2A task id), `$C` (checkpoint), `$NS` (the owner's store
 * namespace root), `$K` (cron). `taken`: creating with a chosen id, where the id space is shared: a foreign
 * id answers the same 409 as one's own, never the resource. `mixed`: also try bob's own
 * thread with alice's run/checkpoint.
 */
interface Case {
  body?: unknown;
  query?: string;
  params?: Partial<Record<string, string>>;
  headers?: Record<string, string>;
  taken?: boolean;
  mixed?: boolean;
}

const hi = { messages: [{ role: "user", content: "hi" }] };
const run = (extra: object = {}): Case => ({ body: { assistant_id: "echo", input: hi, ...extra }, mixed: true });
const MCP = { accept: "application/json, text/event-stream" };
const A2A = { "a2a-version": "1.0" };

const MATRIX: Record<string, Case[]> = {
  "GET /ok": [{}],
  "GET /info": [{}],
  "GET /openapi.json": [{}],
  "GET /docs": [{}],
  "GET /docs/{file}": [{ params: { file: "init.js" } }],
  "GET /favicon.ico": [{}],
  "POST /assistants": [{ body: { graph_id: "echo", assistant_id: "$A" }, taken: true }, {
    body: { graph_id: "echo", assistant_id: "$A", if_exists: "do_nothing" },
    taken: true,
  }],
  "POST /assistants/search": [{ body: { metadata: { secret: "alice" } } }, { body: {} }],
  "POST /assistants/count": [{ body: {} }],
  "GET /assistants/{assistant_id}": [{}],
  "PATCH /assistants/{assistant_id}": [{ body: { name: "pwned" } }],
  "DELETE /assistants/{assistant_id}": [{}, { query: "delete_threads=true" }],
  "GET /assistants/{assistant_id}/graph": [{}],
  "GET /assistants/{assistant_id}/schemas": [{}],
  "GET /assistants/{assistant_id}/subgraphs": [{}],
  "GET /assistants/{assistant_id}/subgraphs/{namespace}": [{ params: { namespace: "child" } }],
  "POST /assistants/{assistant_id}/versions": [{ body: {} }],
  "POST /assistants/{assistant_id}/latest": [{ body: { version: 1 } }],
  "POST /threads": [{ body: { thread_id: "$T" }, taken: true }, {
    body: { thread_id: "$T", if_exists: "do_nothing" },
    taken: true,
  }],
  "POST /threads/search": [{ body: { ids: ["$T"] } }, { body: { metadata: { secret: "alice" } } }, { body: {} }],
  "POST /threads/count": [{ body: {} }],
  "POST /threads/prune": [{ body: { thread_ids: ["$T"] } }],
  "GET /threads/{thread_id}": [{}],
  "PATCH /threads/{thread_id}": [{ body: { metadata: { secret: "pwned" } } }],
  "DELETE /threads/{thread_id}": [{}],
  "POST /threads/{thread_id}/copy": [{}],
  "GET /threads/{thread_id}/state": [{}],
  "POST /threads/{thread_id}/state": [{
    body: { values: { messages: [{ role: "user", content: "pwned" }] }, as_node: "respond" },
  }],
  "GET /threads/{thread_id}/state/{checkpoint_id}": [{ mixed: true }],
  "POST /threads/{thread_id}/state/checkpoint": [{ body: { checkpoint: { checkpoint_id: "$C" } }, mixed: true }],
  "POST /threads/{thread_id}/history": [{ body: {} }, { body: { before: "$C" }, mixed: true }],
  "GET /threads/{thread_id}/history": [{}, { query: "before=$C", mixed: true }],
  "PATCH /threads/{thread_id}/state": [{ body: { metadata: { x: 1 } } }],
  "GET /threads/{thread_id}/stream": [{}],
  "POST /threads/{thread_id}/runs": [run(), run({ assistant_id: "$A" })],
  "GET /threads/{thread_id}/runs": [{}],
  "POST /threads/{thread_id}/runs/stream": [run()],
  "POST /threads/{thread_id}/runs/wait": [
    run(),
    run({ assistant_id: "$A", checkpoint_id: "$C" }),
    run({ checkpoint_id: "$C" }),
  ],
  "GET /threads/{thread_id}/runs/{run_id}": [{ mixed: true }],
  "DELETE /threads/{thread_id}/runs/{run_id}": [{ mixed: true }],
  "GET /threads/{thread_id}/runs/{run_id}/join": [{ mixed: true }],
  "GET /threads/{thread_id}/runs/{run_id}/trace": [{ mixed: true }],
  // Owner-scoped: a user reads their own usage, whatever the grouping.
  "GET /usage": [{}, { query: "group_by=thread" }, { query: "group_by=user" }],
  "GET /threads/{thread_id}/runs/{run_id}/stream": [{ mixed: true }],
  "GET /runs/{run_id}/stream": [{}],
  "POST /threads/{thread_id}/runs/{run_id}/cancel": [{ mixed: true }, { query: "action=rollback", mixed: true }],
  "POST /runs": [{ body: { assistant_id: "$A", input: hi } }],
  "POST /runs/stream": [{ body: { assistant_id: "$A", input: hi } }],
  "POST /runs/wait": [{ body: { assistant_id: "$A", input: hi } }],
  "POST /runs/batch": [{ body: [{ assistant_id: "$A", input: hi }] }],
  "POST /runs/cancel": [{ body: { run_ids: ["$R"] } }, { body: { thread_id: "$T" } }, {
    body: { thread_id: "$T", run_ids: ["$R"] },
  }, { body: { status: "all" } }],
  "POST /runs/crons": [{ body: { assistant_id: "$A", schedule: "0 0 1 1 *" } }],
  "POST /threads/{thread_id}/runs/crons": [{ body: { assistant_id: "echo", schedule: "0 0 1 1 *" } }, {
    body: { assistant_id: "$A", schedule: "0 0 1 1 *" },
    mixed: true,
  }],
  "POST /runs/crons/search": [{ body: {} }, { body: { thread_id: "$T" } }, { body: { metadata: { secret: "alice" } } }],
  "POST /runs/crons/count": [{ body: {} }, { body: { thread_id: "$T" } }],
  "PATCH /runs/crons/{cron_id}": [{ body: { enabled: false, schedule: "* * * * *" } }],
  "DELETE /runs/crons/{cron_id}": [{}],
  "PUT /store/items": [{ body: { namespace: ["$NS", "notes"], key: "diary", value: { text: "pwned" } } }],
  "GET /store/items": [{ query: "namespace=$NS.notes&key=diary" }, { query: "namespace=notes&key=diary" }],
  "DELETE /store/items": [{ body: { namespace: ["$NS", "notes"], key: "diary" } }, {
    body: { namespace: ["notes"], key: "diary" },
  }],
  "POST /store/items/search": [{ body: { namespace_prefix: ["$NS"] } }, { body: {} }],
  "POST /store/namespaces": [{ body: { prefix: ["$NS"] } }, { body: {} }],
  "POST /mcp": [
    { body: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: MCP },
    {
      body: {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "alices_own", arguments: { message: "hi" } },
      },
      headers: MCP,
    },
  ],
  "GET /mcp": [{ headers: MCP }],
  "DELETE /mcp": [{ headers: MCP }],
  "POST /a2a/{assistant_id}": [
    { body: { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "$R" } }, headers: A2A },
    {
      body: { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "$R" } },
      headers: A2A,
      params: { assistant_id: "echo" },
    },
    {
      body: { jsonrpc: "2.0", id: 1, method: "CancelTask", params: { id: "$R" } },
      headers: A2A,
      params: { assistant_id: "echo" },
    },
    {
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { role: "ROLE_USER", messageId: "m1", contextId: "$T", parts: [{ text: "hi" }] } },
      },
      headers: A2A,
      params: { assistant_id: "echo" },
      taken: true,
    },
    { body: { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "$R" } }, params: { assistant_id: "echo" } },
  ],
  "GET /.well-known/agent-card.json": [{ query: "assistant_id=$A" }, {}],
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

let idp: GoTrueServer;
let t: TestServer;
let port: number;
let alice: { token: string; id: string };
let bob: { token: string; id: string };
let theirs: Ids;
let mine: { T: string };
let ops: Array<{ method: string; path: string; public: boolean }>;
let before_: Record<string, string>;

async function call(
  who: { token: string } | null,
  method: string,
  target: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return rawHttp(port, {
    method,
    target,
    headers: { ...(who ? { authorization: `Bearer ${who.token}` } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: 15_000,
  });
}

const sub = (v: unknown, ids: Ids): unknown =>
  JSON.parse(JSON.stringify(v ?? null).replace(/\$(A|T|R|C|NS|K)\b/g, (_, k: keyof Ids) => ids[k]));

function target(path: string, c: Case, ids: Ids): string {
  const p = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const fixed = c.params?.[name];
    if (fixed) return fixed;
    return ({ assistant_id: ids.A, thread_id: ids.T, run_id: ids.R, checkpoint_id: ids.C, cron_id: ids.K } as Record<
      string,
      string
    >)[name] ?? "x";
  });
  const q = c.query?.replace(/\$(A|T|R|C|NS|K)\b/g, (_, k: keyof Ids) => ids[k]);
  return q ? `${p}?${q}` : p;
}

/** A response with the ids it was asked about, every other uuid, time and duration made neutral. */
function normal(res: RawResponse, ids: Ids): string {
  // A stream that started (a run on bob's own thread) differs run to run; its status is what counts.
  if (res.headers["content-type"]?.startsWith("text/event-stream") && res.status < 300) return `${res.status} (stream)`;
  let s = `${res.status} ${res.body}`;
  for (const [k, v] of Object.entries(ids)) s = s.split(v).join(`<${k}>`);
  return s.replace(UUID, "<uuid>").replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>");
}

/** True when a response carries one of alice's ids or secrets that the request did not name itself. */
function leaks(body: string, asked: string): boolean {
  return [theirs.A, theirs.T, theirs.R, theirs.C, theirs.K, "alice's secret", "alices_own", '"secret":"alice"'].some((
    x,
  ) => body.includes(x) && !asked.includes(x));
}

async function aliceSnapshot(): Promise<Record<string, string>> {
  const get = async (path: string, body?: unknown) =>
    (await call(alice, body === undefined ? "GET" : "POST", path, body)).body.replace(/"updated_at":"[^"]*"/g, "");
  return {
    assistant: await get(`/assistants/${theirs.A}`),
    versions: await get(`/assistants/${theirs.A}/versions`, {}),
    thread: await get(`/threads/${theirs.T}`),
    runs: await get(`/threads/${theirs.T}/runs`),
    state: await get(`/threads/${theirs.T}/state`),
    item: await get(`/store/items?namespace=notes&key=diary`),
    threads: await get("/threads/search", {}),
    crons: await get("/runs/crons/search", {}),
    defaults: (await call(alice, "POST", "/assistants/search", { metadata: { created_by: "system" } })).body,
  };
}

before(async () => {
  idp = await startGoTrue();
  const env = { IDENTITY_A_URL: idp.url, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: idp.publishableKey };
  const authenticate = createAuthenticator({
    driver: new PluginDriver([identityA]),
    config: testConfig("identity_a"),
    env,
    mode: "serve",
  });
  t = await startTestServer({
    authenticate,
    extraRoutes: protocolRoutes({ version: VERSION, auth: "bearer", defaultAssistant: () => "echo" }),
  });
  port = Number(new URL(t.url).port);
  const user = async (name: string) => {
    const id = idp.createUser(`${name}@example.com`);
    return { id, token: await idp.issueToken(id) };
  };
  alice = await user("alice");
  bob = await user("bob");
  const doc = JSON.parse((await call(null, "GET", "/openapi.json")).body) as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  ops = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([m, op]) => ({
      method: m.toUpperCase(),
      path,
      public: Array.isArray(op.security) && op.security.length === 0,
    }))
  );

  const ok = async (res: Promise<RawResponse>) => {
    const r = await res;
    assert.ok(r.status < 300, `${r.status} ${r.body}`);
    return r.body ? JSON.parse(r.body) : null;
  };
  const A = (await ok(
    call(alice, "POST", "/assistants", { graph_id: "echo", name: "alices_own", metadata: { secret: "alice" } }),
  )).assistant_id as string;
  const T = (await ok(call(alice, "POST", "/threads", { metadata: { secret: "alice" } }))).thread_id as string;
  await ok(call(alice, "POST", `/threads/${T}/runs/wait`, { assistant_id: A, input: hi }));
  const R = (await ok(call(alice, "GET", `/threads/${T}/runs`)))[0].run_id as string;
  const C = (await ok(call(alice, "GET", `/threads/${T}/state`))).checkpoint.checkpoint_id as string;
  const T2 = (await ok(call(alice, "POST", "/threads", {}))).thread_id as string;
  await ok(call(alice, "POST", `/threads/${T2}/runs`, { assistant_id: "slow", input: { ms: 1 }, after_seconds: 3600 }));
  await ok(
    call(alice, "PUT", "/store/items", { namespace: ["notes"], key: "diary", value: { text: "alice's secret" } }),
  );
  const K = (await ok(
    call(alice, "POST", `/threads/${T}/runs/crons`, {
      assistant_id: A,
      schedule: "0 0 1 1 *",
      metadata: { secret: "alice" },
    }),
  )).cron_id as string;
  theirs = { A, T, R, C, NS: alice.id, K };
  mine = { T: (await ok(call(bob, "POST", "/threads", {}))).thread_id };
  before_ = await aliceSnapshot();
});

after(async () => {
  await t?.close();
  await idp?.close();
});

describe("authorization matrix (identity_a)", () => {
  test("every operation of the OpenAPI document has a row", () => {
    const missing = ops.map((o) => `${o.method} ${o.path}`).filter((k) => !MATRIX[k]);
    assert.deepEqual(missing, [], "add these operations to MATRIX");
  });

  test("without credentials every operation but the public ones is 401", async () => {
    for (const op of ops) {
      for (const c of MATRIX[`${op.method} ${op.path}`] ?? []) {
        const asked = target(op.path, c, theirs) + JSON.stringify(sub(c.body, theirs));
        const res = await call(
          null,
          op.method,
          target(op.path, c, theirs),
          c.body === undefined ? undefined : sub(c.body, theirs),
          c.headers,
        );
        if (op.public) {
          assert.ok(res.status < 500 && !leaks(res.body, asked), `${op.method} ${op.path}: ${res.status} ${res.body}`);
        } else assert.equal(res.status, 401, `${op.method} ${op.path} without credentials: ${res.body.slice(0, 200)}`);
      }
    }
  });

  test("bob's answers on alice's ids equal his answers on unknown ids, and never carry her data", async () => {
    const rows: string[] = [];
    // One set of unknown ids for the whole walk (a write with them, then a read, stays consistent).
    const fresh = (): Ids => ({
      A: crypto.randomUUID(),
      T: crypto.randomUUID(),
      R: crypto.randomUUID(),
      C: "1f0c0000-0000-6000-8000-000000000000",
      NS: `user-${crypto.randomUUID()}`,
      K: crypto.randomUUID(),
    });
    const unknownIds = fresh();
    for (const op of ops) {
      for (const c of MATRIX[`${op.method} ${op.path}`] ?? []) {
        // Creating with a chosen id creates it when unknown: those rows take ids used nowhere else.
        const variants: Array<[Ids, Ids]> = [[theirs, c.taken ? fresh() : unknownIds]];
        if (c.mixed) variants.push([{ ...theirs, T: mine.T }, { ...variants[0]![1], T: mine.T }]);
        for (const [i, [foreign, unknown]] of variants.entries()) {
          const a = await call(
            bob,
            op.method,
            target(op.path, c, foreign),
            c.body === undefined ? undefined : sub(c.body, foreign),
            c.headers,
          );
          const b = await call(
            bob,
            op.method,
            target(op.path, c, unknown),
            c.body === undefined ? undefined : sub(c.body, unknown),
            c.headers,
          );
          const what = `${op.method} ${target(op.path, c, foreign)} ${JSON.stringify(sub(c.body, foreign))}`;
          assert.ok(a.status < 500, `${what}: ${a.status} ${a.body}`);
          assert.ok(!leaks(a.body, what), `${what} leaks alice's data: ${a.body.slice(0, 300)}`);
          if (c.taken) {
            assert.ok(
              a.status === 409 || (a.status === 200 && JSON.parse(a.body).error),
              `${what}: an id in use is a 409 whoever holds it (${a.body})`,
            );
            assert.match(a.body, /the id is taken/);
          } else if (i === 1 && a.status < 300 && b.status < 300) {
            // On bob's own thread a run goes ahead either way; each adds to the thread, so only the status compares.
            assert.equal(a.status, b.status, what);
          } else {
            assert.equal(
              normal(a, foreign),
              normal(b, unknown),
              `${what}: alice's ids answer differently from unknown ones (an oracle)`,
            );
          }
          rows.push(`${a.status} ${what}`);
        }
      }
    }
    assert.ok(rows.length > 60);
  });

  test("after all of that, alice's resources are as they were", async () => {
    assert.deepEqual(await aliceSnapshot(), before_);
    const pending = JSON.parse((await call(alice, "POST", "/threads/search", {})).body) as Array<{ thread_id: string }>;
    assert.equal(pending.length, 2, "both of alice's threads remain");
  });

  test("the default assistant: every user reads and runs it, nobody modifies it", async () => {
    for (const who of [alice, bob]) {
      const got = await call(who, "GET", "/assistants/echo");
      assert.equal(got.status, 200);
      const id = JSON.parse(got.body).assistant_id as string;
      const th = JSON.parse((await call(who, "POST", "/threads", {})).body).thread_id as string;
      assert.equal((await call(who, "POST", `/threads/${th}/runs/wait`, { assistant_id: id, input: hi })).status, 200);
      for (
        const [method, path, body] of [["PATCH", `/assistants/${id}`, { name: "mine now" }], [
          "DELETE",
          `/assistants/${id}`,
          undefined,
        ], ["POST", `/assistants/${id}/latest`, { version: 1 }]] as const
      ) {
        const res = await call(who, method, path, body);
        assert.equal(res.status, 403, `${method} ${path}: ${res.body}`);
        assert.match(JSON.parse(res.body).detail, /default assistant/);
      }
      // Metadata cannot make a user's own assistant pass for a default one.
      const fake = JSON.parse(
        (await call(who, "POST", "/assistants", {
          graph_id: "echo",
          metadata: { created_by: "system", owner: "someone" },
        })).body,
      );
      assert.equal(fake.metadata.created_by, undefined);
      assert.equal(fake.metadata.owner, who.id);
      assert.equal(
        (await call(who, "PATCH", `/assistants/${fake.assistant_id}`, { metadata: { created_by: "system" } })).status,
        200,
      );
      assert.equal((await call(who, "DELETE", `/assistants/${fake.assistant_id}`)).status, 204);
    }
    // Another user's assistant named like a graph never shadows the default one.
    const squat = await call(bob, "POST", "/assistants", { graph_id: "slow", assistant_id: "echo" });
    assert.equal(squat.status, 200);
    assert.equal(JSON.parse((await call(alice, "GET", "/assistants/echo")).body).graph_id, "echo");
  });
});

describe("anonymous provider: one shared identity, by design", () => {
  test("two anonymous browsers share threads (the cookie is UX, not security) and cannot modify the default assistant", async () => {
    const authenticate = createAuthenticator({
      driver: new PluginDriver([anonymousPlugin]),
      config: testConfig("anonymous"),
      env: {},
      mode: "serve",
    });
    const anon = await startTestServer({ authenticate });
    try {
      const p = Number(new URL(anon.url).port);
      const first = await rawHttp(p, {
        method: "POST",
        target: "/threads",
        headers: { cookie: "agentcli_anon=one" },
        body: "{}",
      });
      const id = JSON.parse(first.body).thread_id as string;
      const seen = await rawHttp(p, {
        method: "GET",
        target: `/threads/${id}`,
        headers: { cookie: "agentcli_anon=two" },
      });
      assert.equal(seen.status, 200, "anonymous callers are one identity: a thread is visible to every visitor");
      assert.equal(
        JSON.parse(seen.body).metadata.owner,
        undefined,
        "an unauthenticated caller owns nothing (as on LangGraph's server)",
      );
      const del = await rawHttp(p, { method: "DELETE", target: "/assistants/echo" });
      assert.equal(del.status, 403);
    } finally {
      await anon.close();
    }
  });
});
