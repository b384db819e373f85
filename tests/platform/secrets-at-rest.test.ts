/**
 * The control plane's secrets are encrypted at rest: a deployment's secret values are in no
 * row of its tables and no file of its embedded database, yet every rollout receives them in
 * plaintext (the `computeFor` seam records what a rollout is given). The key is generated into
 * the data directory with owner-only permissions; a bad `AGENTCLI_PLATFORM_SECRETS_KEY` is a
 * start-up error naming it.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { platformEncryption, SECRETS_KEY_FILE } from "../../core/platform/store/secrets-at-rest.ts";
import { filesContaining } from "../_plaintext.ts";
import { RecordingCompute, startTestPlatform, type TestPlatform, until } from "./_harness.ts";

const compute = new RecordingCompute();
let t: TestPlatform;
before(async () => {
  t = await startTestPlatform({ computeFor: () => compute, env: {} });
});
after(() => t?.close());

test("secret values are stored sealed, rollouts get them in plaintext, the key file is owner-only", async () => {
  const first = `sentinel-${crypto.randomUUID()}`;
  const second = `sentinel-${crypto.randomUUID()}`;
  const created = await t.call("POST", "/v2/deployments", {
    body: {
      name: "sealed",
      source: "internal_container",
      source_revision_config: { image_uri: "registry.example/agent:1" },
      secrets: [{ name: "MY_TOKEN", value: first }],
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id: string = created.body.id;
  const r1 = await until(
    async () => compute.rollouts.find((r) => r.revision.id === created.body.latest_revision_id),
    "the first rollout",
  );
  assert.deepEqual(r1.secrets.filter((s) => s.name === "MY_TOKEN"), [{ name: "MY_TOKEN", value: first }]);

  // The same secrets again make no revision (compared in plaintext); new ones do.
  const same = await t.call("PATCH", `/v2/deployments/${id}`, {
    body: { secrets: [{ name: "MY_TOKEN", value: first }] },
  });
  assert.equal(same.body.latest_revision_id, created.body.latest_revision_id);
  const patched = await t.call("PATCH", `/v2/deployments/${id}`, {
    body: { secrets: [{ name: "MY_TOKEN", value: second }] },
  });
  assert.notEqual(patched.body.latest_revision_id, created.body.latest_revision_id);
  const r2 = await until(
    async () => compute.rollouts.find((r) => r.revision.id === patched.body.latest_revision_id),
    "the second rollout",
  );
  assert.deepEqual(r2.secrets.filter((s) => s.name === "MY_TOKEN"), [{ name: "MY_TOKEN", value: second }]);

  for (const table of ["platform_deployments", "platform_revisions"]) {
    const { rows } = await t.platform.sql.query(`SELECT * FROM ${table}`);
    const text = JSON.stringify(rows);
    assert.ok(text.includes("MY_TOKEN"), `${table} holds the secret's name`);
    assert.ok(!text.includes(first) && !text.includes(second), `${table} holds no secret value in plaintext`);
  }
  const mode = statSync(join(t.dataDir, SECRETS_KEY_FILE)).mode & 0o777;
  assert.equal(mode, 0o600);
  if (process.env.PLATFORM_TEST_POSTGRES !== "1") {
    await t.platform.sql.query("CHECKPOINT");
    assert.deepEqual(filesContaining(join(t.dataDir, "db"), first), []);
    assert.deepEqual(filesContaining(join(t.dataDir, "db"), second), []);
  }
});

test("the key file is reused, and a bad AGENTCLI_PLATFORM_SECRETS_KEY is an error naming it", async () => {
  const a = await platformEncryption(t.dataDir, {});
  const sealed = a.sealText("x");
  assert.equal((await platformEncryption(t.dataDir, {})).openText(sealed), "x");
  await assert.rejects(
    platformEncryption(t.dataDir, { AGENTCLI_PLATFORM_SECRETS_KEY: "too-short" }),
    /AGENTCLI_PLATFORM_SECRETS_KEY: an AES key must be 16, 24 or 32 bytes, and this one is 9/,
  );
  // Rotation: the generated key moves to the previous keys and still opens what it sealed.
  const rotated = await platformEncryption(t.dataDir, {
    AGENTCLI_PLATFORM_SECRETS_KEY: "k".repeat(32),
    AGENTCLI_PLATFORM_SECRETS_PREVIOUS_KEYS: readFileSync(join(t.dataDir, SECRETS_KEY_FILE), "utf8").trim(),
  });
  assert.equal(rotated.openText(sealed), "x");
  assert.equal(
    (await platformEncryption(t.dataDir, { AGENTCLI_PLATFORM_SECRETS_KEY: "k".repeat(32) })).openText(
      rotated.sealText("y"),
    ),
    "y",
  );
});
