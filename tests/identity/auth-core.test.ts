/**
 * The auth core: public paths, constant-time comparison, the token cache and the JWKS key
 * store (with a test clock), the authenticator's setup errors, the platform-key and anonymous
 * postures, post-deploy setup lines, the dev banner.
 *
 * Run: npx node --test tests/identity/auth-core.test.ts
 */
import { after, afterEach, beforeEach, describe, it, mock } from "node:test";
import assert from "node:assert/strict";
import { AgentcliError } from "../../core/kernel/errors.ts";
import { definePlugin } from "../../core/kernel/hooks.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import {
  authErrorResponse,
  constantTimeEqual,
  createAuthenticator,
  devAuthBanner,
  isPublicPath,
  JwksKeyStore,
  postDeploySetup,
  TokenCache,
} from "../../core/auth/index.ts";
import anonymous from "../../plugins/identity/anonymous.ts";
import platformKey from "../../plugins/identity/platform_key.ts";
import identityA from "../../plugins/identity/identity_a.ts";
import { statusOf, testConfig } from "./config.ts";
import { startJwksServer } from "../fixtures/identity-servers/jwks.ts";

const req = (path: string, headers: Record<string, string> = {}) =>
  new Request(`http://agent.test${path}`, { headers });

describe("public paths", () => {
  it("are exactly the health, metadata, UI shell, API reference, favicon and well-known paths", () => {
    for (
      const p of [
        "/ok",
        "/info",
        "/openapi.json",
        "/app",
        "/app/",
        "/app/index.html",
        "/app/assets/x.js",
        "/docs",
        "/docs/",
        "/docs/init.js",
        "/favicon.ico",
        "/.well-known/agent-card.json",
      ]
    ) assert.ok(isPublicPath(p), p);
    for (
      const p of [
        "/",
        "/ok/",
        "/okay",
        "/info/x",
        "/threads",
        "/runs",
        "/assistants/search",
        "/store/items",
        "/application",
        "/mcp",
        "/a2a",
        "/app%2F..%2Fthreads",
        "/docs%2F..%2Fthreads",
        "/documents",
        "/favicon.ico/x",
        "/.well-known",
      ]
    ) assert.ok(!isPublicPath(p), p);
  });
});

describe("constantTimeEqual", () => {
  it("compares whole strings of any length", async () => {
    assert.equal(await constantTimeEqual("s3cret-key", "s3cret-key"), true);
    assert.equal(await constantTimeEqual("s3cret-key", "s3cret-kez"), false);
    assert.equal(await constantTimeEqual("s3cret", "s3cret-key"), false);
    assert.equal(await constantTimeEqual("", "x"), false);
    assert.equal(await constantTimeEqual("x", ""), false);
    assert.equal(await constantTimeEqual("", ""), true);
    // The secret's characters are taken in a cycle: a repetition of it is still another string.
    assert.equal(await constantTimeEqual("abab", "ab"), false);
    assert.equal(await constantTimeEqual("k\u00e9y\u{1F511}", "k\u00e9y\u{1F511}"), true);
    assert.equal(await constantTimeEqual("k\u00e9y\u{1F511}", "k\u00e9y\u{1F512}"), false);
  });
});

describe("TokenCache", () => {
  it("keeps positive results for the TTL, never past the token's exp, bounded in size", async () => {
    let now = 1_000_000;
    const cache = new TokenCache({ ttlMs: 30_000, maxEntries: 2, now: () => now });
    const u = (identity: string) => ({ identity, isAuthenticated: true });
    await cache.set("t1", u("a"));
    await cache.set("t2", u("b"), { expSeconds: (now + 10_000) / 1000 });
    assert.equal((await cache.get("t1"))?.identity, "a");
    assert.equal(await cache.get("t1", "other-server"), null);
    now += 10_000;
    assert.equal(await cache.get("t2"), null, "exp bounds the entry");
    assert.equal((await cache.get("t1"))?.identity, "a");
    now += 20_000;
    assert.equal(await cache.get("t1"), null, "ttl bounds the entry");
    await cache.set("t3", u("c"));
    await cache.set("t4", u("d"));
    await cache.set("t5", u("e"));
    assert.equal(cache.size, 2);
    assert.equal(await cache.get("t3"), null, "oldest evicted");
    await cache.set("t6", u("f"), { expSeconds: (now - 1) / 1000 });
    assert.equal(await cache.get("t6"), null, "already expired tokens are not cached");
  });
});

describe("JwksKeyStore", () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  // jose's remote key set reads Date.now(): the test clock is node:test's mocked Date.
  beforeEach(() => mock.timers.enable({ apis: ["Date"], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());
  after(async () => {
    for (const s of servers) await s.close();
  });

  it("refetches on an unknown key id at most once per cooldown, and on age", async () => {
    const s = await startJwksServer();
    servers.push(s);
    const store = new JwksKeyStore({
      url: s.jwksUrl,
      headers: { authorization: `Bearer ${s.secretKey}` },
      cooldownMs: 30_000,
      maxAgeMs: 600_000,
    });
    const keyFor = (kid: string) => store.getKey({ alg: "RS256", kid }, { payload: "", signature: "" });
    await keyFor(s.currentKid);
    await keyFor(s.currentKid);
    assert.equal(s.jwksCalls, 1);
    const rotated = await s.rotate();
    mock.timers.tick(1_000);
    await keyFor(rotated);
    assert.equal(s.jwksCalls, 2, "rotation refetch");
    await assert.rejects(keyFor("ins_unknown"), { code: "ERR_JWKS_NO_MATCHING_KEY" });
    assert.equal(s.jwksCalls, 2, "no refetch within the cooldown");
    mock.timers.tick(30_000);
    await assert.rejects(keyFor("ins_unknown"), { code: "ERR_JWKS_NO_MATCHING_KEY" });
    assert.equal(s.jwksCalls, 3, "one refetch after the cooldown");
    mock.timers.tick(600_001);
    await keyFor(rotated);
    assert.equal(s.jwksCalls, 4, "refetch when stale");
  });

  it("keeps serving the last good key set while the provider is down, without retrying within the cooldown", async () => {
    const s = await startJwksServer();
    const store = new JwksKeyStore({
      url: s.jwksUrl,
      headers: { authorization: `Bearer ${s.secretKey}` },
      maxAgeMs: 1_000,
      cooldownMs: 30_000,
    });
    const kid = s.currentKid;
    await store.getKey({ alg: "RS256", kid }, { payload: "", signature: "" });
    await s.close();
    mock.timers.tick(5_000);
    assert.ok(await store.getKey({ alg: "RS256", kid }, { payload: "", signature: "" }));
    await assert.rejects(store.getKey({ alg: "RS256", kid: "ins_unknown" }, { payload: "", signature: "" }), {
      code: "ERR_JWKS_NO_MATCHING_KEY",
    });
    const fresh = new JwksKeyStore({ url: s.jwksUrl, headers: {} });
    await assert.rejects(
      fresh.getKey({ alg: "RS256", kid }, { payload: "", signature: "" }),
      (e: unknown) => e instanceof AgentcliError && e.status === 503 && /key set at .* is unreachable/.test(e.message),
    );
  });

  it("names the key set and its HTTP status when the credential is refused", async () => {
    const s = await startJwksServer();
    servers.push(s);
    const store = new JwksKeyStore({ url: s.jwksUrl, headers: { authorization: "Bearer wrong" }, label: "identity_b" });
    await assert.rejects(
      store.getKey({ alg: "RS256", kid: s.currentKid }, { payload: "", signature: "" }),
      (e: unknown) =>
        e instanceof AgentcliError && e.status === 503 &&
        e.message.includes(`identity_b key set at ${s.jwksUrl} answered HTTP 401`) && !e.message.includes("wrong"),
    );
  });
});

describe("createAuthenticator", () => {
  const driver = new PluginDriver([identityA, anonymous, platformKey]);

  it("refuses to start when the provider has no plugin or its credentials are missing", () => {
    assert.throws(() => createAuthenticator({ driver, config: testConfig("identity_z"), env: {}, mode: "serve" }), {
      code: "CONFIG_INVALID",
    });
    assert.throws(() => createAuthenticator({ driver, config: testConfig("identity_a"), env: {}, mode: "serve" }), {
      code: "CREDENTIALS_MISSING",
      message: /IDENTITY_A_URL/,
    });
    assert.throws(() => createAuthenticator({ driver, config: testConfig(null), env: {}, mode: "serve" }), {
      code: "CREDENTIALS_MISSING",
      message: /PLATFORM_API_KEY/,
    });
    assert.throws(
      () =>
        createAuthenticator({
          driver: new PluginDriver([anonymous]),
          config: testConfig(null),
          env: { PLATFORM_API_KEY: "k" },
          mode: "serve",
        }),
      { code: "CONFIG_INVALID" },
    );
    assert.doesNotThrow(
      () => createAuthenticator({ driver, config: testConfig("identity_a"), env: {}, mode: "dev" }),
      "dev with the bypass starts without credentials",
    );
  });

  it("asks only the configured provider's plugin", async () => {
    const greedy = definePlugin({
      name: "greedy",
      kind: "extension",
      hooks: { "auth:authenticate": () => ({ identity: "intruder", isAuthenticated: true }) },
    });
    const authenticate = createAuthenticator({
      driver: new PluginDriver([greedy, platformKey]),
      config: testConfig(null),
      env: { PLATFORM_API_KEY: "k-1" },
      mode: "serve",
    });
    assert.equal(await statusOf(authenticate(req("/threads"))), 401);
    assert.equal((await authenticate(req("/threads", { "x-api-key": "k-1" })))?.identity, "platform-api-key");
  });

  it("without [auth]: x-api-key must equal PLATFORM_API_KEY", async () => {
    const authenticate = createAuthenticator({
      driver,
      config: testConfig(null),
      env: { PLATFORM_API_KEY: "pk_live_123" },
      mode: "serve",
    });
    const user = await authenticate(req("/threads", { "x-api-key": "pk_live_123" }));
    assert.deepEqual([user?.identity, user?.isAuthenticated], ["platform-api-key", true]);
    const refused: Array<Record<string, string>> = [{}, { "x-api-key": "" }, { "x-api-key": "pk_live_12" }, {
      "x-api-key": "pk_live_1234",
    }, { authorization: "Bearer pk_live_123" }];
    for (const headers of refused) {
      try {
        await authenticate(req("/threads", headers));
        assert.fail(`accepted ${JSON.stringify(headers)}`);
      } catch (err) {
        assert.ok(err instanceof AgentcliError);
        const res = authErrorResponse(err);
        assert.equal(res.status, 401);
        const body = await res.json() as { detail: string };
        assert.match(body.detail, /x-api-key/);
        assert.ok(!body.detail.includes("pk_live"));
        assert.equal(res.headers.get("www-authenticate"), null);
      }
    }
    assert.equal(await authenticate(req("/ok")), null);
  });

  it("dev bypass covers the platform-key posture; serve never does", async () => {
    const dev = createAuthenticator({ driver, config: testConfig(null), env: { PLATFORM_API_KEY: "k" }, mode: "dev" });
    assert.equal((await dev(req("/threads")))?.identity, "dev-user");
    assert.equal(await statusOf(dev(req("/threads", { "x-api-key": "wrong" }))), 401);
    assert.equal(await statusOf(dev(req("/threads", { "x-agentcli-dev-user": "bad id with spaces" }))), 401);
    const serve = createAuthenticator({
      driver,
      config: testConfig(null),
      env: { PLATFORM_API_KEY: "k", AGENTCLI_DEV_AUTH_BYPASS: "1" },
      mode: "serve",
    });
    assert.equal(await statusOf(serve(req("/threads", { "x-agentcli-dev-user": "dev-user" }))), 401);
  });

  it("anonymous lets everyone in as an unauthenticated caller, in dev and serve", async () => {
    for (const mode of ["dev", "serve"] as const) {
      const authenticate = createAuthenticator({ driver, config: testConfig("anonymous"), env: {}, mode });
      const user = await authenticate(req("/threads"));
      assert.deepEqual([user?.identity, user?.isAuthenticated], ["anonymous", false]);
    }
  });
});

describe("postDeploySetup and devAuthBanner", () => {
  it("names the dashboard step of each provider (from the identity plugin's postDeploy)", () => {
    const all = new PluginDriver(builtinPlugins);
    const a = postDeploySetup(testConfig("identity_a"), "https://my-agent.example.com/", all);
    assert.equal(a.length, 1);
    assert.match(a[0]!, /"https:\/\/my-agent\.example\.com\/app\/\*\*"/);
    const b = postDeploySetup(testConfig("identity_b"), "my-agent.example.com", all);
    assert.match(b[0]!, /allowed domains/);
    assert.match(b[0]!, /"my-agent\.example\.com"/);
    assert.deepEqual(postDeploySetup(testConfig("anonymous"), "https://x.example", all), []);
    assert.deepEqual(postDeploySetup(testConfig(null), "https://x.example", all), []);
  });

  it("announces the bypass in dev only", () => {
    assert.match(devAuthBanner({ config: testConfig("identity_b"), env: {}, mode: "dev" }) ?? "", /bypass ON/);
    assert.match(
      devAuthBanner({ config: testConfig("identity_b"), env: { AGENTCLI_DEV_AUTH_BYPASS: "0" }, mode: "dev" }) ?? "",
      /enforced/,
    );
    assert.equal(devAuthBanner({ config: testConfig("identity_b"), env: {}, mode: "serve" }), null);
    assert.equal(
      devAuthBanner({ config: testConfig("anonymous"), env: {}, mode: "dev", identity: anonymous.identity }),
      null,
    );
  });
});
