/**
 * Behavior particular to each bearer provider, beyond the conformance suite: identity_a's
 * verification cache, identity_b's key rotation and its tolerance of a provider outage.
 *
 * Run: npx node --test tests/identity/providers.test.ts
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { type Authenticate, createAuthenticator } from "../../core/auth/index.ts";
import identityA from "../../plugins/identity/identity_a.ts";
import identityB from "../../plugins/identity/identity_b.ts";
import { type GoTrueServer, startGoTrue } from "../fixtures/identity-servers/gotrue.ts";
import { type JwksServer, startJwksServer } from "../fixtures/identity-servers/jwks.ts";
import { statusOf, testConfig } from "./config.ts";

const bearer = (token: string) =>
  new Request("http://agent.test/threads", { headers: { authorization: `Bearer ${token}` } });

describe("identity_a", () => {
  let s: GoTrueServer;
  let authenticate: Authenticate;
  before(async () => {
    s = await startGoTrue();
    const env = { IDENTITY_A_URL: `${s.url}/`, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: s.publishableKey };
    authenticate = createAuthenticator({
      driver: new PluginDriver([identityA]),
      config: testConfig("identity_a"),
      env,
      mode: "serve",
    });
  });
  after(async () => {
    await s.close();
  });

  it("signs in with the provider's password grant and verifies the session access token", async () => {
    s.createUser("carol@example.com", "pw-carol");
    const res = await fetch(`${s.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { apikey: s.publishableKey, "content-type": "application/json" },
      body: JSON.stringify({ email: "carol@example.com", password: "pw-carol" }),
    });
    const session = await res.json() as { access_token: string; user: { id: string } };
    const user = await authenticate(bearer(session.access_token));
    assert.deepEqual([user?.identity, user?.email, user?.displayName], [session.user.id, "carol@example.com", "carol"]);
  });

  it("caches positive answers, never failures", async () => {
    const id = s.createUser("dave@example.com");
    const token = await s.issueToken(id);
    const before = s.userCalls;
    await authenticate(bearer(token));
    await authenticate(bearer(token));
    assert.equal(s.userCalls - before, 1, "second check served from the cache");
    const forged = await s.forgeToken(id);
    const mid = s.userCalls;
    assert.equal(await statusOf(authenticate(bearer(forged))), 401);
    assert.equal(await statusOf(authenticate(bearer(forged))), 401);
    assert.equal(s.userCalls - mid, 2, "refusals are asked again");
  });

  it("answers 503 while the identity server fails, then recovers", async () => {
    const token = await s.issueToken(s.createUser("erin@example.com"));
    s.failing = true;
    assert.equal(await statusOf(authenticate(bearer(token))), 503);
    s.failing = false;
    assert.equal((await authenticate(bearer(token)))?.isAuthenticated, true);
  });
});

describe("identity_b", () => {
  let s: JwksServer;
  let env: Record<string, string>;
  let authenticate: Authenticate;
  before(async () => {
    s = await startJwksServer();
    env = { IDENTITY_B_SECRET_KEY: s.secretKey, IDENTITY_B_API_URL: s.url };
    authenticate = createAuthenticator({
      driver: new PluginDriver([identityB]),
      config: testConfig("identity_b"),
      env,
      mode: "serve",
    });
  });
  after(async () => {
    await s.close();
  });

  it("finds the JWKS at {IDENTITY_B_API_URL}/v1/jwks and checks no azp when no parties are set", async () => {
    const user = await authenticate(
      bearer(await s.sign("user_frank", { azp: "https://anywhere.example", email: "f@example.com" })),
    );
    assert.deepEqual([user?.identity, user?.email], ["user_frank", "f@example.com"]);
  });

  it("follows a key rotation with one refetch; a random key id does not trigger another", async () => {
    await authenticate(bearer(await s.sign("user_g")));
    const calls = s.jwksCalls;
    await s.rotate();
    assert.equal((await authenticate(bearer(await s.sign("user_g"))))?.identity, "user_g");
    assert.equal(s.jwksCalls, calls + 1);
    assert.equal(await statusOf(authenticate(bearer(await s.sign("user_g", {}, { kid: "ins_random" })))), 401);
    assert.equal(s.jwksCalls, calls + 1);
  });

  it("accepts tokens within 5 s of clock skew and refuses beyond", async () => {
    const now = Math.floor(Date.now() / 1000);
    assert.equal(await statusOf(authenticate(bearer(await s.sign("user_h", { exp: now - 2 })))), 200);
    assert.equal(await statusOf(authenticate(bearer(await s.sign("user_h", { exp: now - 30 })))), 401);
    assert.equal(await statusOf(authenticate(bearer(await s.sign("user_h", { nbf: now + 2 })))), 200);
  });

  it("refuses unsigned and HMAC tokens", async () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "user_i", exp: now + 60 })}.`;
    assert.equal(await statusOf(authenticate(bearer(none))), 401);
    const hs = `${b64({ alg: "HS256", kid: s.currentKid })}.${b64({ sub: "user_i", exp: now + 60 })}.c2ln`;
    assert.equal(await statusOf(authenticate(bearer(hs))), 401);
  });

  it("keeps verifying with cached keys while the provider is down", async () => {
    const token = await s.sign("user_j");
    await s.close();
    assert.equal((await authenticate(bearer(token)))?.identity, "user_j");
  });
});
