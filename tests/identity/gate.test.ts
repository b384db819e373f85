/**
 * The release gates' credential (core/auth/gate.ts, issue 37): under an identity provider a
 * revision started with `AGENTCLI_GATE_TOKEN` takes `x-agentcli-gate: <that token>` as its own
 * per-user identity `agentcli-gate:<user>`; any other value, a short or missing token, or `dev`
 * is a 401; the platform-key and anonymous postures ignore the header.
 *
 * Run: npx node --test tests/identity/gate.test.ts
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AgentcliError } from "../../core/kernel/errors.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { createAuthenticator } from "../../core/auth/index.ts";
import { withGateCredential } from "../../core/platform/reconciler/gates.ts";
import { testConfig } from "./config.ts";

const driver = new PluginDriver(builtinPlugins);
const TOKEN = "g".repeat(20) + "-gate-token-of-this-revision-0123";
const IDENTITY_A = { IDENTITY_A_URL: "http://127.0.0.1:9", IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: "pk-test" };
const req = (headers: Record<string, string> = {}) => new Request("http://agent.test/threads", { headers });

/** The 401 an authenticator refuses `request` with (fails when it accepts it). */
async function refused(authenticate: (r: Request) => Promise<unknown>, request: Request): Promise<string> {
  try {
    await authenticate(request);
  } catch (err) {
    assert.ok(err instanceof AgentcliError);
    assert.equal(err.status, 401);
    assert.doesNotMatch(err.message, new RegExp(TOKEN), "the message never shows the token");
    return err.message;
  }
  assert.fail("the request was accepted");
}

describe("the gate credential under an identity provider", () => {
  const serve = (env: Record<string, string>) =>
    createAuthenticator({ driver, config: testConfig("identity_a"), env: { ...IDENTITY_A, ...env }, mode: "serve" });

  it("is the revision's own per-user identity, never the shared owner", async () => {
    const authenticate = serve({ AGENTCLI_GATE_TOKEN: TOKEN });
    const user = await authenticate(req({ "x-agentcli-gate": TOKEN }));
    assert.deepEqual(
      { identity: user?.identity, authenticated: user?.isAuthenticated, shared: user?.shared ?? false },
      { identity: "agentcli-gate:eval", authenticated: true, shared: false },
    );
    const alice = await authenticate(req({ "x-agentcli-gate": TOKEN, "x-agentcli-gate-user": "alice" }));
    assert.equal(alice?.identity, "agentcli-gate:alice");
  });

  it("refuses any other value, a bad user, and a revision without a token, with a short one or under dev", async () => {
    const authenticate = serve({ AGENTCLI_GATE_TOKEN: TOKEN });
    assert.match(await refused(authenticate, req({ "x-agentcli-gate": `${TOKEN}x` })), /not this revision's gate/);
    await refused(authenticate, req({ "x-agentcli-gate": TOKEN.slice(0, -1) }));
    await refused(authenticate, req({ "x-agentcli-gate": "" }));
    await refused(authenticate, req({ "x-agentcli-gate": TOKEN, "x-agentcli-gate-user": "../x" }));
    await refused(serve({}), req({ "x-agentcli-gate": "" }));
    const short = "s".repeat(31);
    await refused(serve({ AGENTCLI_GATE_TOKEN: short }), req({ "x-agentcli-gate": short }));
    const dev = createAuthenticator({
      driver,
      config: testConfig("identity_a"),
      env: { ...IDENTITY_A, AGENTCLI_GATE_TOKEN: TOKEN },
      mode: "dev",
    });
    await refused(dev, req({ "x-agentcli-gate": TOKEN }));
    assert.match(await refused(authenticate, req()), /Authorization|bearer|token/i, "no header: the provider decides");
  });
});

describe("the gate credential under the other postures", () => {
  it("is ignored: the platform key still needs x-api-key, anonymous stays anonymous", async () => {
    const env = { PLATFORM_API_KEY: "platform-key-1234", AGENTCLI_GATE_TOKEN: TOKEN };
    const keyed = createAuthenticator({ driver, config: testConfig(null), env, mode: "serve" });
    await refused(keyed, req({ "x-agentcli-gate": TOKEN }));
    const owner = await keyed(req({ "x-agentcli-gate": TOKEN, "x-api-key": "platform-key-1234" }));
    assert.equal(owner?.shared, true);
    const open = createAuthenticator({ driver, config: testConfig("anonymous"), env, mode: "serve" });
    const visitor = await open(req({ "x-agentcli-gate": TOKEN }));
    assert.equal(visitor?.isAuthenticated, false);
  });
});

describe("the control plane's side", () => {
  it("mints a new token per gated revision and drops a deployment secret of that name", () => {
    const secrets = [{ name: "A", value: "1" }, { name: "AGENTCLI_GATE_TOKEN", value: "set-by-hand-".repeat(4) }];
    assert.deepEqual(withGateCredential(secrets, false), { secrets: [{ name: "A", value: "1" }], token: null });
    const one = withGateCredential(secrets, true);
    const two = withGateCredential(secrets, true);
    assert.ok(one.token && one.token.length >= 43 && one.token !== two.token);
    assert.deepEqual(one.secrets, [{ name: "A", value: "1" }, { name: "AGENTCLI_GATE_TOKEN", value: one.token }]);
  });
});
