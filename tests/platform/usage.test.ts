/**
 * The control plane shows a deployment's usage: `GET /v2/deployments/{id}/usage` asks the
 * deployed agent's own `GET /usage` with its PLATFORM_API_KEY (a real revision process of
 * the local listener) and answers what it reports; without a key it says how to fix it.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { openPlatform, type Platform } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { makeBundle, until } from "./_harness.ts";

let dataDir = "";
let platform: Platform;
let key = "";

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await platform.app.request(path, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const HELD_SERVE = fileURLToPath(new URL("./_held-serve.ts", import.meta.url));

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentcli-platform-usage-"));
  platform = await openPlatform({
    dataDir,
    mode: "cloud",
    onError: () => {},
    driver: await loadPlugins(builtinPlugins),
    localCommand: [process.execPath, ...process.execArgv, HELD_SERVE],
  });
  const tenant = await createTenant(platform.sql, "usage");
  key = (await createApiKey(platform.sql, { tenantId: tenant.id, userId: "alice" })).key;
});
after(async () => {
  await platform?.close();
  await rm(dataDir, { recursive: true, force: true });
});

test("a deployment's usage, read by the control plane from the deployment as its owner", async () => {
  const c = await call("POST", "/v2/deployments", { name: "usage-1", source: "internal_source" });
  const id = c.body.id;
  const early = await call("GET", `/v2/deployments/${id}/usage`);
  assert.equal(early.status, 409);
  assert.match(early.body.detail ?? JSON.stringify(early.body), /has no URL yet/);
  const u = await call("POST", `/v2/deployments/${id}/upload-url`);
  const target = new URL(u.body.upload_url);
  const bundle = await makeBundle({ name: "usage-agent" });
  const put = await platform.app.request(target.pathname + target.search, {
    method: "PUT",
    body: bundle as Uint8Array<ArrayBuffer>,
  });
  assert.equal(put.status, 200);
  const p = await call("PATCH", `/v2/deployments/${id}`, {
    source_revision_config: { source_tarball_path: u.body.object_path },
    secrets: [{ name: "PLATFORM_API_KEY", value: "agent-key" }],
  });
  const rev = await until(
    async () => {
      const r = await call("GET", `/v2/deployments/${id}/revisions/${p.body.latest_revision_id}`);
      return ["DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED"].includes(r.body.status) ? r.body : null;
    },
    "the revision to end",
    1800,
  );
  assert.equal(rev.status, "DEPLOYED", rev.status_message);
  const usage = await call("GET", `/v2/deployments/${id}/usage?group_by=model`);
  assert.equal(usage.status, 200, JSON.stringify(usage.body));
  assert.equal(usage.body.group_by, "model");
  assert.equal(usage.body.recording, true);
  assert.equal(usage.body.user, null, "the owner reads everyone's");
  assert.deepEqual(usage.body.rows, []);
  const bad = await call("GET", `/v2/deployments/${id}/usage?group_by=planet`);
  assert.equal(bad.status, 422, "the deployment's own refusal comes through");
});
