/**
 * A gated rollout on the embedded database (issue 37), where old and new revisions cannot run
 * side by side: the stable URL holds requests while the new revision is checked; its smoke run
 * fails (its model answers an error), so it ends DEPLOY_FAILED with the reason in its logs, the
 * previous revision starts again and serves, and the load loop on the stable URL counts no
 * failed request.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPlatform, type Platform } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { deployBundle, keyedRequest, makeBundle, revisionSettled } from "./_harness.ts";

let dataDir = "";
let platform: Platform;
let model: ModelServer;
let key = "";
let id = "";

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return await keyedRequest(platform.app, key, method, path, body);
}

async function deploy(version: string, release?: unknown, o: { platformKey?: string } = {}): Promise<string> {
  // With a platform key the agent has no [auth] section: the key guards it, as a project's default.
  const auth = o.platformKey ? "" : `\n[auth]\nprovider = "anonymous"\n`;
  const agentToml = `[agent]\nname = "embedded-gate"\nmodel = "openai:gate-${version}"\n${auth}`;
  const bundle = await makeBundle({ agentToml });
  const rid = await deployBundle(platform.app, key, id, bundle, {
    secrets: [
      { name: "OPENAI_API_KEY", value: "sk-gate" },
      { name: "OPENAI_BASE_URL", value: model.openaiBaseUrl },
      ...(o.platformKey ? [{ name: "PLATFORM_API_KEY", value: o.platformKey }] : []),
    ],
    release,
  });
  await revisionSettled(platform.app, key, id, rid, { attempts: 3000 });
  return rid;
}

before(async () => {
  model = await startModelServer();
  dataDir = await mkdtemp(join(tmpdir(), "agentcli-release-embedded-"));
  platform = await openPlatform({
    dataDir,
    mode: "cloud",
    onError: () => {},
    driver: await loadPlugins(builtinPlugins),
  });
  const tenant = await createTenant(platform.sql, `embedded-${Date.now()}`);
  key = (await createApiKey(platform.sql, { tenantId: tenant.id, userId: "releaser" })).key;
  id = (await call("POST", "/v2/deployments", { name: "embedded-gate", source: "internal_source" })).body.id;
});

after(async () => {
  await platform?.close();
  await model?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test("embedded database: a revision failing its smoke gate never serves; the previous one starts again; no request fails", async () => {
  const first = await deploy("V1");
  const d = (await call("GET", `/v2/deployments/${id}`)).body;
  assert.equal(d.active_revision_id, first);
  model.script({ when: (r) => r.model === "gate-V2", error: { status: 500, message: "the model is down" } });
  for (let i = 0; i < 3; i++) model.script({ when: (r) => r.model === "gate-V1", text: "served by V1" });
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (running) {
      try {
        const r = await fetch(`${d.url}/threads`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        await r.body?.cancel();
        if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
        ok++;
      } catch (err) {
        failures.push(String(err));
      }
    }
  })();
  const bad = await deploy("V2", { gates: { smoke: true } });
  running = false;
  await loop;
  const r = (await call("GET", `/v2/deployments/${id}/revisions/${bad}`)).body;
  assert.equal(r.status, "DEPLOY_FAILED");
  assert.match(r.status_message, /^gate smoke run failed: /);
  const log = (await call("GET", `/v2/deployments/${id}/revisions/${bad}/logs?kind=deploy`)).body.logs
    .map((l: { message: string }) => l.message).join("\n");
  assert.match(log, /gate: \/ok answered 200/);
  assert.match(log, /the new revision did not pass; restarting the previous one/);
  assert.deepEqual(failures, []);
  assert.ok(ok > 0);
  assert.equal((await call("GET", `/v2/deployments/${id}`)).body.active_revision_id, first);
  const wait = await fetch(`${d.url}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } }),
  });
  assert.match(JSON.stringify(await wait.json()), /served by V1/);
});

test("a gate calls a revision guarded by its platform key with that key: the smoke run passes, the revision serves", async () => {
  model.script({ when: (r) => r.model === "gate-V3", text: "served by V3" });
  const rid = await deploy("V3", { gates: { smoke: true } }, { platformKey: "pk-gate-secret" });
  const r = (await call("GET", `/v2/deployments/${id}/revisions/${rid}`)).body;
  assert.equal(r.status, "DEPLOYED", r.status_message);
  const log = (await call("GET", `/v2/deployments/${id}/revisions/${rid}/logs?kind=deploy`)).body.logs
    .map((l: { message: string }) => l.message).join("\n");
  assert.match(log, /gate: a smoke run through the Agent API succeeded/);
  assert.doesNotMatch(log, /pk-gate-secret/);
  const d = (await call("GET", `/v2/deployments/${id}`)).body;
  assert.equal(d.active_revision_id, rid);
  const denied = await fetch(`${d.url}/threads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  await denied.body?.cancel();
  assert.equal(denied.status, 401, "the revision is guarded by its key");
});
