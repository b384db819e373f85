/**
 * Runs the identity conformance suite against every bearer-token identity plugin, each with a
 * local server speaking its provider's real protocol. A new plugin: add one entry below.
 *
 * Run: npx node --test tests/identity/conformance.test.ts
 */
import { identityProviderConformance } from "../../core/testing/identity-provider.ts";
import { startGoTrue } from "../fixtures/identity-servers/gotrue.ts";
import { startJwksServer } from "../fixtures/identity-servers/jwks.ts";
import identityA from "../../plugins/identity/identity_a.ts";
import identityB from "../../plugins/identity/identity_b.ts";

identityProviderConformance({
  provider: "identity_a",
  plugin: identityA,
  async start() {
    const s = await startGoTrue();
    const env = { IDENTITY_A_URL: s.url, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: s.publishableKey };
    const user = async (name: string) => {
      const identity = s.createUser(`${name}-${crypto.randomUUID()}@example.com`);
      return { token: await s.issueToken(identity), identity };
    };
    return {
      env,
      user,
      expiredToken: async () => s.issueToken((await user("late")).identity, { expiresIn: -120 }),
      forgedToken: async () => s.forgeToken((await user("forger")).identity),
      extraCases: [
        {
          name: "token of a deleted user",
          status: 401,
          make: async () => ({ token: await s.issueToken(crypto.randomUUID()) }),
        },
        {
          name: "server rejects our publishable key",
          status: 503,
          make: async () => ({
            token: (await user("k")).token,
            env: { ...env, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: "sb_publishable_wrong" },
          }),
        },
      ],
      async takeDown() {
        const { token } = await user("down");
        await s.close();
        return { token };
      },
      close: () => s.close(),
    };
  },
});

identityProviderConformance({
  provider: "identity_b",
  plugin: identityB,
  async start() {
    const s = await startJwksServer({ azp: "http://localhost:3000" });
    const env = {
      IDENTITY_B_SECRET_KEY: s.secretKey,
      IDENTITY_B_JWKS_URL: s.jwksUrl,
      IDENTITY_B_AUTHORIZED_PARTIES: "http://localhost:3000,https://agent.example.com",
    };
    const now = () => Math.floor(Date.now() / 1000);
    return {
      env,
      user: async (name) => ({ token: await s.sign(`user_${name}`), identity: `user_${name}` }),
      expiredToken: () => s.sign("user_late", { iat: now() - 600, nbf: now() - 600, exp: now() - 120 }),
      forgedToken: () => s.forge("user_forger"),
      extraCases: [
        {
          name: "azp not an authorized party",
          status: 401,
          make: async () => ({ token: await s.sign("user_x", { azp: "https://evil.example" }) }),
        },
        {
          name: "no azp while authorized parties are set",
          status: 401,
          make: async () => ({ token: await s.sign("user_x", { azp: undefined }) }),
        },
        {
          name: "not valid yet (nbf in a minute)",
          status: 401,
          make: async () => ({ token: await s.sign("user_x", { nbf: now() + 60 }) }),
        },
        { name: "no sub", status: 401, make: async () => ({ token: await s.sign("", {}) }) },
        {
          name: "wrong issuer when IDENTITY_B_ISSUER is set",
          status: 401,
          make: async () => ({
            token: await s.sign("user_x", { iss: "https://other.example" }),
            env: { ...env, IDENTITY_B_ISSUER: s.url },
          }),
        },
        {
          name: "secret key rejected by the JWKS endpoint",
          status: 503,
          make: async () => ({
            token: await s.sign("user_x"),
            env: { ...env, IDENTITY_B_SECRET_KEY: "sk_test_wrong" },
          }),
        },
      ],
      async takeDown() {
        const token = await s.sign("user_down");
        await s.close();
        // A fresh server process has no keys cached yet: a different JWKS address models it.
        return { token, env: { ...env, IDENTITY_B_JWKS_URL: `${s.jwksUrl}?fresh=1` } };
      },
      close: () => s.close(),
    };
  },
});
