/**
 * The local listener under stress: a revision process killed is restarted (with its output
 * in the deploy logs); a revision that is not healthy ends DEPLOY_FAILED with the reason while
 * the previous one keeps serving; a control-plane restart runs the active revision again at
 * the same URL; a rollout cut short by a stop ends INTERRUPTED. Revision processes start
 * through `_held-serve.ts`, which can hold one at its health check (see there).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { openPlatform, type Platform } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import type { LocalCompute } from "../../plugins/compute/local.ts";
import { makeBundle, revisionSettled, until, uploadBundle } from "./_harness.ts";

let dataDir = "";
let platform: Platform;
let key = "";
let bundle: Uint8Array;

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await platform.app.request(path, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function upload(deploymentId: string): Promise<string> {
  return await uploadBundle(platform.app, key, deploymentId, bundle);
}

async function final(deploymentId: string, revisionId: string) {
  return await revisionSettled(platform.app, key, deploymentId, revisionId, { attempts: 1800 });
}

async function logs(deploymentId: string, revisionId: string): Promise<string> {
  return (await call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?kind=deploy`)).body.logs.map((
    l: { message: string },
  ) => l.message).join("\n");
}

const HELD_SERVE = fileURLToPath(new URL("./_held-serve.ts", import.meta.url));
const open = async () =>
  openPlatform({
    dataDir,
    mode: "cloud",
    onError: () => {},
    driver: await loadPlugins(builtinPlugins),
    localCommand: [process.execPath, ...process.execArgv, HELD_SERVE],
  });
/** The process id of a deployment's current revision process. */
const pidOf = (id: string) => (platform.computes.get("local") as LocalCompute).pidOf(id);

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentcli-platform-local-"));
  platform = await open();
  const tenant = await createTenant(platform.sql, "local");
  key = (await createApiKey(platform.sql, { tenantId: tenant.id, userId: "alice" })).key;
  bundle = await makeBundle({ name: "local-agent" });
});

after(async () => {
  await platform?.close();
  await rm(dataDir, { recursive: true, force: true });
});

let deploymentId = "";
let url = "";
let live = "";

test("a killed revision process is restarted and serves again at the same URL", async () => {
  const c = await call("POST", "/v2/deployments", { name: "local-1", source: "internal_source" });
  deploymentId = c.body.id;
  const p = await call("PATCH", `/v2/deployments/${deploymentId}`, {
    source_revision_config: { source_tarball_path: await upload(deploymentId) },
    secrets: [{ name: "PLATFORM_API_KEY", value: "agent-key" }],
  });
  const rev = await final(deploymentId, p.body.latest_revision_id);
  assert.equal(rev.status, "DEPLOYED", rev.status_message);
  live = rev.id;
  url = (await call("GET", `/v2/deployments/${deploymentId}`)).body.url;
  const pid = pidOf(deploymentId);
  assert.ok(pid);
  process.kill(pid, "SIGKILL");
  const again = await until(async () => {
    const next = pidOf(deploymentId);
    if (!next || next === pid) return null;
    return (await fetch(`${url}/ok`).then((r) => r.status, () => 0)) === 200 ? next : null;
  }, "the restarted process to answer");
  assert.notEqual(again, pid);
  const client = new Client({ apiUrl: url, defaultHeaders: { "x-api-key": "agent-key" } });
  assert.ok((await client.assistants.search({ limit: 5 })).length >= 1);
  const text = await logs(deploymentId, live);
  assert.match(text, /revision process exited \(SIGKILL\)/);
  assert.match(text, /restarting in \d+ ms/);
});

test("an unhealthy revision ends DEPLOY_FAILED with the reason; the previous one keeps serving", async () => {
  // Without PLATFORM_API_KEY a bundle with no [auth] section refuses to start.
  const p = await call("PATCH", `/v2/deployments/${deploymentId}`, { secrets: [] });
  const rev = await final(deploymentId, p.body.latest_revision_id);
  assert.equal(rev.status, "DEPLOY_FAILED");
  assert.match(rev.status_message, /PLATFORM_API_KEY/);
  assert.match(await logs(deploymentId, rev.id), /DEPLOY_FAILED/);
  const d = (await call("GET", `/v2/deployments/${deploymentId}`)).body;
  assert.equal(d.active_revision_id, live);
  const res = await fetch(`${url}/assistants/search`, {
    method: "POST",
    headers: { "x-api-key": "agent-key", "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
});

test("a rollout cut short by a control-plane stop ends INTERRUPTED; after a restart the previous revision serves at the same URL", async () => {
  // The new revision's process is held before it can answer /ok: the stop lands mid-health-check.
  const hold = join(dataDir, "hold-health-check");
  const p = await call("PATCH", `/v2/deployments/${deploymentId}`, {
    secrets: [{ name: "PLATFORM_API_KEY", value: "agent-key-2" }, { name: "AGENTCLI_TEST_HOLD", value: hold }],
  });
  const cut = p.body.latest_revision_id;
  await until(async () => existsSync(`${hold}.waiting`), "the new revision to be held at its health check");
  assert.equal((await call("GET", `/v2/deployments/${deploymentId}/revisions/${cut}`)).body.status, "DEPLOYING");
  await platform.close();
  assert.ok(!existsSync(hold), "the held revision was never released");
  assert.notEqual(await fetch(`${url}/ok`).then((r) => r.status, () => 0), 200, "stopped with the control plane");

  platform = await open();
  const r = (await call("GET", `/v2/deployments/${deploymentId}/revisions/${cut}`)).body;
  assert.equal(r.status, "INTERRUPTED");
  assert.match(r.status_message, /interrupted|stopped/);
  const d = (await call("GET", `/v2/deployments/${deploymentId}`)).body;
  assert.equal(d.active_revision_id, live, "the previous revision stays active");
  assert.equal(d.url, url, "the stable URL survives a restart");
  await until(
    async () => (await fetch(`${url}/ok`).then((x) => x.status, () => 0)) === 200,
    "the restored revision to answer",
  );
  const client = new Client({ apiUrl: url, defaultHeaders: { "x-api-key": "agent-key" } });
  assert.ok((await client.assistants.search({ limit: 5 })).length >= 1, "the previous revision (its secrets) serves");
  const refused = await fetch(`${url}/assistants/search`, {
    method: "POST",
    headers: { "x-api-key": "agent-key-2", "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(refused.status, 401, "not the interrupted one");
  await refused.body?.cancel();
});
