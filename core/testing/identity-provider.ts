/**
 * The conformance kit for bearer-token identity providers (`agentcli/testing`): the suite
 * every such plugin passes, built-in or third-party. Give it the plugin and how to start a
 * local server speaking its provider's protocol, mint a valid, an expired and a forged
 * token, and take the server down; it registers `node:test` tests.
 *
 * @example
 * import { identityProviderConformance } from "agentcli/testing";
 * import plugin from "./my-identity.ts";
 * identityProviderConformance({ provider: "my_idp", plugin, start: async () => startMyIdpFake() });
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { AgentcliError, type Env, type Plugin, PluginDriver } from "../kernel/index.ts";
import { type Authenticate, authErrorResponse, createAuthenticator } from "../auth/index.ts";
import { minimalConfig } from "./config.ts";

export interface ProviderHarness {
  env: Env;
  /** A valid token of a (new) user named `name`, and the identity it must map to. */
  user(name: string): Promise<{ token: string; identity: string }>;
  expiredToken(): Promise<string>;
  /** A well-formed token whose signature (or server-side check) does not hold. */
  forgedToken(): Promise<string>;
  /** Provider-specific tokens or settings that must be refused with `status`. */
  extraCases?: Array<
    { name: string; status: 401 | 503; make(h: ProviderHarness): Promise<{ token: string; env?: Env }> }
  >;
  /** Stops the identity server; returns a token whose check needs it (nothing cached). */
  takeDown(): Promise<{ token: string; env?: Env }>;
  close(): Promise<void>;
}

export interface IdentityProviderEntry {
  provider: string;
  plugin: Plugin;
  start(): Promise<ProviderHarness>;
}

async function refusal(
  authenticate: Authenticate,
  headers: Record<string, string>,
  path = "/threads/search",
): Promise<{ status: number; body: { detail?: string }; challenge: string | null; message: string }> {
  try {
    const user = await authenticate(new Request(`http://agent.test${path}`, { method: "POST", headers }));
    assert.fail(`expected a refusal, got user ${JSON.stringify(user)}`);
  } catch (err) {
    if (!(err instanceof AgentcliError)) throw err;
    const res = authErrorResponse(err);
    return {
      status: res.status,
      body: await res.json() as { detail?: string },
      challenge: res.headers.get("www-authenticate"),
      message: err.message + (err.hint ?? ""),
    };
  }
}

/** Registers the whole suite for one provider. */
export function identityProviderConformance(entry: IdentityProviderEntry): void {
  describe(`identity conformance: ${entry.provider}`, () => {
    let h: ProviderHarness;
    let driver: PluginDriver;
    const auth = (mode: "dev" | "serve" = "serve", env: Env = h.env) =>
      createAuthenticator({ driver, config: minimalConfig({ auth: { provider: entry.provider } }), env, mode });

    before(async () => {
      h = await entry.start();
      driver = new PluginDriver([entry.plugin]);
    });
    after(async () => {
      await h?.close();
    });

    it("accepts a valid token and maps it to the user's identity", async () => {
      const alice = await h.user("alice");
      const user = await auth()(
        new Request("http://agent.test/threads", { headers: { authorization: `Bearer ${alice.token}` } }),
      );
      assert.equal(user?.identity, alice.identity);
      assert.equal(user?.isAuthenticated, true);
    });

    it("tells two users apart", async () => {
      const [a, b] = [await h.user("ann"), await h.user("bob")];
      assert.notEqual(a.identity, b.identity);
      const authenticate = auth();
      const ua = await authenticate(
        new Request("http://agent.test/threads", { headers: { authorization: `Bearer ${a.token}` } }),
      );
      const ub = await authenticate(
        new Request("http://agent.test/threads", { headers: { authorization: `Bearer ${b.token}` } }),
      );
      assert.deepEqual([ua?.identity, ub?.identity], [a.identity, b.identity]);
    });

    it("refuses a request without a token: 401, JSON detail, WWW-Authenticate: Bearer", async () => {
      const r = await refusal(auth(), {});
      assert.equal(r.status, 401);
      assert.match(r.body.detail ?? "", /Authorization: Bearer/);
      assert.match(r.challenge ?? "", /^Bearer realm="agentcli"/);
    });

    for (const header of ["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "Bearer\tx", "token abc"]) {
      it(`refuses a malformed Authorization header (${JSON.stringify(header)}) with 401`, async () => {
        const r = await refusal(auth(), { authorization: header });
        assert.equal(r.status, 401);
        assert.match(r.challenge ?? "", /^Bearer/);
      });
    }

    it("refuses a token that is not a JWT with 401", async () => {
      const r = await refusal(auth(), { authorization: "Bearer not-a-real-token" });
      assert.equal(r.status, 401);
      assert.match(r.challenge ?? "", /error="invalid_token"/);
    });

    it("refuses an expired token with 401 and never echoes it", async () => {
      const token = await h.expiredToken();
      const r = await refusal(auth(), { authorization: `Bearer ${token}` });
      assert.equal(r.status, 401);
      assert.match(r.body.detail ?? "", /expired|invalid/);
      assert.ok(!r.message.includes(token) && !JSON.stringify(r.body).includes(token));
    });

    it("refuses a forged token with 401", async () => {
      const token = await h.forgedToken();
      const r = await refusal(auth(), { authorization: `Bearer ${token}` });
      assert.equal(r.status, 401);
      assert.ok(!JSON.stringify(r.body).includes(token));
    });

    it("never asks for credentials on public paths", async () => {
      const authenticate = auth();
      for (
        const path of [
          "/ok",
          "/info",
          "/openapi.json",
          "/app",
          "/app/",
          "/app/assets/index-1a2b.js",
          "/.well-known/agent-card.json",
        ]
      ) {
        assert.equal(await authenticate(new Request(`http://agent.test${path}`)), null, path);
      }
      for (const path of ["/okay", "/threads", "/store/items", "/apps", "/mcp"]) {
        assert.equal((await refusal(authenticate, {}, path)).status, 401, path);
      }
    });

    it("serve ignores the development bypass entirely", async () => {
      const env = { ...h.env, AGENTCLI_DEV_AUTH_BYPASS: "1" };
      const r = await refusal(auth("serve", env), { "x-agentcli-dev-user": "mallory" });
      assert.equal(r.status, 401);
    });

    it("dev bypass: no credentials -> the dev user; credentials are still verified", async () => {
      const authenticate = auth("dev");
      assert.equal((await authenticate(new Request("http://agent.test/threads")))?.identity, "dev-user");
      assert.equal(
        (await authenticate(new Request("http://agent.test/threads", { headers: { "x-agentcli-dev-user": "dev-2" } })))
          ?.identity,
        "dev-2",
      );
      assert.equal((await refusal(authenticate, { authorization: `Bearer ${await h.forgedToken()}` })).status, 401);
      const off = await refusal(auth("dev", { ...h.env, AGENTCLI_DEV_AUTH_BYPASS: "0" }), {});
      assert.equal(off.status, 401);
    });

    it("provider-specific refusals", async () => {
      for (const c of h.extraCases ?? []) {
        const { token, env } = await c.make(h);
        const r = await refusal(auth("serve", env ?? h.env), { authorization: `Bearer ${token}` });
        assert.equal(r.status, c.status, c.name);
        assert.ok(!JSON.stringify(r.body).includes(token), c.name);
      }
    });

    it("fails closed with 503 and a clear message when the identity server is down", async () => {
      const { token, env } = await h.takeDown();
      const r = await refusal(auth("serve", env ?? h.env), { authorization: `Bearer ${token}` });
      assert.equal(r.status, 503);
      assert.match(r.body.detail ?? "", /unreachable/);
      assert.ok(!JSON.stringify(r.body).includes(token));
    });
  });
}
