/**
 * A canary survives a control-plane restart (issue 37): the threads it took are in the control
 * plane's store (`platform_canary_threads`, written before the client learns the thread's id),
 * so after the control plane stops (its revision processes with it) and starts again on the
 * same database and data folder, the serving revision and the canary run again, every thread's
 * later turns reach the revision its first turn did, the canary's share of new threads goes on
 * where it was, and promote forgets the threads. Real `agentcli serve` revision processes of a
 * PostgreSQL control plane, the scripted model server; which revision served a turn is read
 * from the model its agent.toml names.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPlatform, type Platform } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { openSql, type SqlDriver } from "../../core/storage/sql.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { deployBundle, keyedRequest, makeBundle, modelSecrets, revisionSettled, stableJson } from "./_harness.ts";

let dataDir = "";
let dbUrl = "";
let platform: Platform;
let model: ModelServer;
let admin: SqlDriver;
let schema = "";
let key = "";
let deploymentId = "";
let url = "";

const agentToml = (version: string) =>
  `[agent]\nname = "restart-e2e"\nmodel = "openai:restart-${version}"\n\n[auth]\nprovider = "anonymous"\n`;

async function open(): Promise<Platform> {
  return await openPlatform({
    dataDir,
    mode: "cloud",
    databaseUrl: dbUrl,
    onError: () => {},
    driver: await loadPlugins(builtinPlugins),
  });
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return await keyedRequest(platform.app, key, method, path, body);
}

async function deploy(version: string, release?: unknown): Promise<string> {
  const bundle = await makeBundle({ agentToml: agentToml(version) });
  const id = await deployBundle(platform.app, key, deploymentId, bundle, {
    secrets: modelSecrets("sk-restart", model.openaiBaseUrl),
    release,
  });
  const settled = await revisionSettled(platform.app, key, deploymentId, id, { canary: true });
  assert.ok(settled.status === "DEPLOYED" || release, JSON.stringify(settled));
  return id;
}

async function json(path: string, body?: unknown): Promise<any> {
  return await stableJson(url, path, body);
}

/** One turn on a thread through the stable URL; the version whose model answered it. */
async function turn(threadId: string): Promise<string> {
  model.script({ when: (r) => r.model === "restart-V1", text: "served by V1" });
  model.script({ when: (r) => r.model === "restart-V2", text: "served by V2" });
  const out = await json(`/threads/${threadId}/runs/wait`, {
    assistant_id: "agent",
    input: { messages: [{ role: "user", content: "which revision are you?" }] },
  });
  return /served by (V\d)/.exec(String(out.messages?.at(-1)?.content))?.[1] ?? `unknown: ${JSON.stringify(out)}`;
}

async function storedThreads(): Promise<Map<string, string>> {
  const { rows } = await admin.query<{ thread_id: string; revision_id: string }>(
    `SELECT thread_id, revision_id FROM ${schema}.platform_canary_threads WHERE deployment_id = $1`,
    [deploymentId],
  );
  return new Map(rows.map((r) => [r.thread_id, r.revision_id]));
}

before(async () => {
  model = await startModelServer();
  dataDir = await mkdtemp(join(tmpdir(), "agentcli-release-restart-"));
  const root = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  schema = `release_restart_${process.pid}`;
  admin = await openSql({ url: root, poolSize: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const u = new URL(root);
  u.searchParams.set("options", `-c search_path=${schema}`);
  dbUrl = u.toString();
  platform = await open();
  const tenant = await createTenant(platform.sql, `restart-${Date.now()}`);
  key = (await createApiKey(platform.sql, { tenantId: tenant.id, userId: "releaser" })).key;
  deploymentId = (await call("POST", "/v2/deployments", { name: "restart-e2e", source: "internal_source" })).body.id;
  await deploy("V1");
  url = (await call("GET", `/v2/deployments/${deploymentId}`)).body.url;
});

after(async () => {
  await platform?.close();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.close();
  await model?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test("a canary's threads stay on their revision across a control-plane restart; its share goes on; promote forgets them", async () => {
  const before = (await json("/threads", {})).thread_id as string;
  const canary = await deploy("V2", { canary_percent: 50 });
  const threads: string[] = [];
  for (let i = 0; i < 20; i++) threads.push((await json("/threads", {})).thread_id);
  const servedBy = new Map<string, string>();
  for (const t of [...threads, before]) servedBy.set(t, await turn(t));
  assert.equal([...servedBy.values()].filter((v) => v === "V2").length, 10, JSON.stringify([...servedBy]));
  const stored = await storedThreads();
  assert.deepEqual(
    [...stored.keys()].sort(),
    threads.filter((t) => servedBy.get(t) === "V2").sort(),
    "the store holds exactly the canary's threads",
  );
  assert.ok([...stored.values()].every((r) => r === canary));

  await platform.close();
  platform = await open();
  const d = (await call("GET", `/v2/deployments/${deploymentId}`)).body;
  assert.deepEqual(d.canary, { revision_id: canary, percent: 50 });
  url = d.url;
  const moved: string[] = [];
  for (const t of [...threads, before]) {
    const again = await turn(t);
    if (again !== servedBy.get(t)) moved.push(`${t}: ${servedBy.get(t)} then ${again}`);
  }
  assert.deepEqual(moved, [], "no thread changed revision across the restart");

  // The exact share goes on from where it was: 10 of 20 before, 5 of the next 10.
  const later: string[] = [];
  for (let i = 0; i < 10; i++) later.push((await json("/threads", {})).thread_id);
  const onCanary = (await Promise.all(later.map(turn))).filter((v) => v === "V2").length;
  assert.equal(onCanary, 5);
  assert.equal((await storedThreads()).size, 15);

  const promoted = await call("POST", `/v2/deployments/${deploymentId}/canary/promote`);
  assert.equal(promoted.status, 200, JSON.stringify(promoted.body));
  assert.equal((await storedThreads()).size, 0, "a canary that ended forgets its threads");
  assert.equal(await turn(before), "V2");
  assert.equal(await turn(threads.find((t) => servedBy.get(t) === "V1")!), "V2");
});
