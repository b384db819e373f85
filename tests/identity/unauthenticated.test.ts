/**
 * Every Agent API and store endpoint refuses requests without valid credentials: 401 with a
 * JSON `detail` (and `WWW-Authenticate: Bearer` for bearer providers) under identity_a and
 * identity_b; `x-api-key` is enforced without `[auth]`; the dev bypass is inert under `serve`;
 * anonymous lets everyone in as one unauthenticated caller. Public paths stay open.
 *
 * Run: npx node --test tests/identity/unauthenticated.test.ts
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import type { Env } from "../../core/kernel/hooks.ts";
import { type GoTrueServer, startGoTrue } from "../fixtures/identity-servers/gotrue.ts";
import { type JwksServer, startJwksServer } from "../fixtures/identity-servers/jwks.ts";
import { type AuthedServer, startAuthedServer, statusOf } from "./_agent-server.ts";

const T = "00000000-0000-4000-8000-000000000001";
const R = "00000000-0000-4000-8000-000000000002";
const A = "echo";
const run = { assistant_id: A, input: {} };

/** Every endpoint of the Agent API and the store, plus an unknown path. */
const ENDPOINTS: Array<[string, string, unknown?]> = [
  ["POST", "/assistants", { graph_id: A }],
  ["POST", "/assistants/search", {}],
  ["POST", "/assistants/count", {}],
  ["GET", `/assistants/${A}`],
  ["PATCH", `/assistants/${A}`, {}],
  ["DELETE", `/assistants/${A}`],
  ["GET", `/assistants/${A}/graph`],
  ["GET", `/assistants/${A}/schemas`],
  ["GET", `/assistants/${A}/subgraphs`],
  ["POST", `/assistants/${A}/versions`, {}],
  ["POST", `/assistants/${A}/latest`, { version: 1 }],
  ["POST", "/threads", {}],
  ["POST", "/threads/search", {}],
  ["POST", "/threads/count", {}],
  ["POST", "/threads/prune", { thread_ids: [T] }],
  ["GET", `/threads/${T}`],
  ["PATCH", `/threads/${T}`, { metadata: {} }],
  ["DELETE", `/threads/${T}`],
  ["POST", `/threads/${T}/copy`],
  ["GET", `/threads/${T}/state`],
  ["POST", `/threads/${T}/state`, { values: {} }],
  ["PATCH", `/threads/${T}/state`, { metadata: {} }],
  ["GET", `/threads/${T}/state/${R}`],
  ["POST", `/threads/${T}/state/checkpoint`, { checkpoint: {} }],
  ["GET", `/threads/${T}/history`],
  ["POST", `/threads/${T}/history`, {}],
  ["GET", `/threads/${T}/stream`],
  ["POST", `/threads/${T}/runs`, run],
  ["POST", `/threads/${T}/runs/stream`, run],
  ["POST", `/threads/${T}/runs/wait`, run],
  ["GET", `/threads/${T}/runs`],
  ["GET", `/threads/${T}/runs/${R}`],
  ["DELETE", `/threads/${T}/runs/${R}`],
  ["GET", `/threads/${T}/runs/${R}/join`],
  ["GET", `/threads/${T}/runs/${R}/stream`],
  ["POST", `/threads/${T}/runs/${R}/cancel`],
  ["POST", "/runs", run],
  ["POST", "/runs/stream", run],
  ["POST", "/runs/wait", run],
  ["POST", "/runs/batch", [run]],
  ["POST", "/runs/cancel", { run_ids: [R] }],
  ["GET", `/runs/${R}/stream`],
  ["PUT", "/store/items", { namespace: ["n"], key: "k", value: {} }],
  ["GET", "/store/items?namespace=n&key=k"],
  ["DELETE", "/store/items", { namespace: ["n"], key: "k" }],
  ["POST", "/store/items/search", {}],
  ["POST", "/store/namespaces", {}],
  ["GET", "/no-such-endpoint"],
];
const PUBLIC = ["/ok", "/info", "/openapi.json"];

/** Extra components, mounted the way MCP and A2A are: they must sit behind auth too. */
const extraRoutes = ["/mcp", "/a2a"].map((path) => ({
  path,
  app: new Hono().all("*", (c) => c.json({ reached: true })),
}));

async function send(
  url: string,
  [method, path, body]: [string, string, unknown?],
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Asserts every endpoint answers 401 with a JSON `detail`; returns the endpoints without a Bearer challenge. */
async function assertAllRefused(url: string, headers: Record<string, string>): Promise<string[]> {
  const wrong: string[] = [];
  const unchallenged: string[] = [];
  for (const ep of ENDPOINTS) {
    const res = await send(url, ep, headers);
    const text = await res.text();
    let detail: unknown;
    try {
      detail = (JSON.parse(text) as { detail?: unknown }).detail;
    } catch { /* reported below */ }
    if (res.status !== 401 || typeof detail !== "string") {
      wrong.push(`${ep[0]} ${ep[1]} -> ${res.status} ${text.slice(0, 60)}`);
    } else if (!(res.headers.get("www-authenticate") ?? "").startsWith("Bearer")) {
      unchallenged.push(`${ep[0]} ${ep[1]}`);
    }
  }
  assert.deepEqual(wrong, [], `endpoints not refused with 401:\n${wrong.join("\n")}`);
  return unchallenged;
}

async function assertPublicOpen(url: string): Promise<void> {
  for (const path of PUBLIC) assert.equal((await fetch(`${url}${path}`)).status, 200, path);
}

describe("identity_a: no credentials, no access", () => {
  let idp: GoTrueServer;
  let srv: AuthedServer;
  before(async () => {
    idp = await startGoTrue();
    srv = await startAuthedServer({
      provider: "identity_a",
      env: { IDENTITY_A_URL: idp.url, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: idp.publishableKey },
      extra: { extraRoutes },
    });
  });
  after(async () => {
    await srv?.close();
    await idp?.close();
  });

  it("refuses every endpoint without a token, with a malformed header and with a forged token", async () => {
    await assertAllRefused(srv.url, {});
    await assertAllRefused(srv.url, { authorization: "Basic YWxpY2U6cHc=" });
    await assertAllRefused(srv.url, {
      authorization: `Bearer ${await idp.forgeToken(idp.createUser("eve@example.com"))}`,
    });
  });

  it("challenges with WWW-Authenticate: Bearer on every 401", async () => {
    assert.deepEqual(await assertAllRefused(srv.url, {}), []);
  });

  it("puts extra components (MCP, A2A) mounted with extraRoutes behind auth too", async () => {
    const reached: string[] = [];
    for (const path of ["/mcp", "/a2a/tasks"]) {
      const res = await fetch(`${srv.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      if (res.status !== 401) reached.push(`POST ${path} -> ${res.status} ${(await res.text()).slice(0, 40)}`);
      else await res.body?.cancel();
    }
    assert.deepEqual(reached, []);
  });

  it("keeps public paths open and lets a signed-in user through the SDK", async () => {
    await assertPublicOpen(srv.url);
    assert.equal(await statusOf(srv.client().threads.search()), 401);
    const id = idp.createUser("amy@example.com");
    const t = await srv.client({ authorization: `Bearer ${await idp.issueToken(id)}` }).threads.create();
    assert.equal(t.metadata?.owner, id);
  });
});

describe("identity_b: no credentials, no access; the dev bypass is inert under serve", () => {
  let idp: JwksServer;
  let srv: AuthedServer;
  let env: Env;
  before(async () => {
    idp = await startJwksServer();
    env = { IDENTITY_B_SECRET_KEY: idp.secretKey, IDENTITY_B_JWKS_URL: idp.jwksUrl, AGENTCLI_DEV_AUTH_BYPASS: "1" };
    srv = await startAuthedServer({ provider: "identity_b", env, mode: "serve", extra: { extraRoutes } });
  });
  after(async () => {
    await srv?.close();
    await idp?.close();
  });

  it("refuses every endpoint without a token, with an expired one, and with the dev-user header", async () => {
    await assertAllRefused(srv.url, {});
    await assertAllRefused(srv.url, {
      authorization: `Bearer ${await idp.sign("user_x", { exp: Math.floor(Date.now() / 1000) - 600 })}`,
    });
    await assertAllRefused(srv.url, { "x-agentcli-dev-user": "dev-user" });
    await assertPublicOpen(srv.url);
  });

  it("the same settings under dev accept requests without credentials as the dev user", async () => {
    const dev = await startAuthedServer({ provider: "identity_b", env, mode: "dev" });
    try {
      const t = await dev.client().threads.create();
      assert.equal(t.metadata?.owner, "dev-user");
      const other = dev.client({ "x-agentcli-dev-user": "dev-2" });
      assert.equal(await statusOf(other.threads.get(t.thread_id)), 404);
      assert.equal(await statusOf(dev.client({ authorization: "Bearer not-a-token" }).threads.search()), 401);
    } finally {
      await dev.close();
    }
  });
});

describe("no [auth]: the platform API key", () => {
  let srv: AuthedServer;
  before(async () => {
    srv = await startAuthedServer({
      provider: null,
      env: { PLATFORM_API_KEY: "pk-test-4f1c" },
      extra: { extraRoutes },
    });
  });
  after(async () => {
    await srv?.close();
  });

  it("refuses every endpoint without x-api-key or with a wrong one", async () => {
    await assertAllRefused(srv.url, {});
    await assertAllRefused(srv.url, { "x-api-key": "pk-test-4f1" });
    await assertAllRefused(srv.url, { authorization: "Bearer pk-test-4f1c" });
    await assertPublicOpen(srv.url);
  });

  it("accepts the key through the SDK, as one service identity", async () => {
    assert.equal(await statusOf(srv.client({}, "wrong").threads.search()), 401);
    const t = await srv.client({}, "pk-test-4f1c").threads.create();
    // One service identity owns nothing apart (as LangGraph's server without custom auth): no owner.
    assert.equal(t.metadata?.owner, undefined);
    assert.equal((await srv.client({}, "pk-test-4f1c").threads.get(t.thread_id)).thread_id, t.thread_id);
  });
});

describe("anonymous: everyone in, as one unauthenticated caller", () => {
  let srv: AuthedServer;
  before(async () => {
    srv = await startAuthedServer({ provider: "anonymous", env: {} });
  });
  after(async () => {
    await srv?.close();
  });

  it("needs no header", async () => {
    const t = await srv.client().threads.create();
    assert.equal(t.metadata?.owner, undefined); // an unauthenticated caller owns nothing
    assert.equal(
      (await srv.client({ "x-agentcli-dev-user": "someone" }).threads.get(t.thread_id)).thread_id,
      t.thread_id,
    );
  });
});
