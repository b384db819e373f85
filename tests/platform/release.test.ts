/**
 * Release safety end to end (issue 37) on the local listener, with real `agentcli serve`
 * revision processes of a PostgreSQL control plane (old and new revisions side by side), the
 * scripted model server as every revision's model, and HTTP clients on the stable URL:
 * a revision whose eval gate fails never takes traffic (no request fails meanwhile); a canary
 * at 20% takes about 20% of 200 new threads and every turn of a thread stays on its revision;
 * promote and abort; a rollback under a load loop loses no request and serves the old build.
 * Which revision served a turn is read from the model the request named (each revision's
 * agent.toml names its own).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { openPlatform, type Platform } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { acquireLease } from "../../core/platform/store/leases.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { openSql } from "../../core/storage/sql.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { deployBundle, keyedRequest, makeBundle, modelSecrets, revisionSettled, stableJson } from "./_harness.ts";
import { CLI, makeProject, removeProject } from "../toolchain/_project.ts";

let dataDir = "";
let platform: Platform;
let model: ModelServer;
let key = "";
let dropSchema = async () => {};
let deploymentId = "";
let url = "";

const N_THREADS = Number(process.env.RELEASE_TEST_THREADS ?? 200);
const agentToml = (version: string) =>
  `[agent]\nname = "release-e2e"\nmodel = "openai:release-${version}"\n\n[auth]\nprovider = "anonymous"\n`;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return await keyedRequest(platform.app, key, method, path, body);
}

/** Uploads a bundle whose AGENTS.md names `version` and patches it in as a new revision (with `release`). */
async function deploy(version: string, release?: unknown): Promise<string> {
  const bundle = await makeBundle({ agentToml: agentToml(version), agentsMd: `# Agent ${version}\n` });
  return await deployBundle(platform.app, key, deploymentId, bundle, {
    secrets: modelSecrets("sk-release", model.openaiBaseUrl),
    release,
  });
}

async function settled(revisionId: string) {
  return await revisionSettled(platform.app, key, deploymentId, revisionId, { canary: true, attempts: 3000 });
}

async function logs(revisionId: string): Promise<string> {
  const r = await call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?kind=deploy`);
  return r.body.logs.map((l: { message: string }) => l.message).join("\n");
}

/** Every model request is answered with the version whose model it names: "served by V<n>". */
function answerByVersion(count: number): void {
  for (let i = 0; i < count; i++) {
    for (const v of ["V1", "V2", "V3"]) {
      model.script({ when: (r) => r.model === `release-${v}`, text: `served by ${v}` });
    }
  }
}

async function json(path: string, body?: unknown): Promise<any> {
  return await stableJson(url, path, body);
}

/** One turn on a thread through the stable URL; the version that served it. */
async function turn(threadId: string): Promise<string> {
  const out = await json(`/threads/${threadId}/runs/wait`, {
    assistant_id: "agent",
    input: { messages: [{ role: "user", content: "which revision are you?" }] },
  });
  const last = out.messages?.at(-1)?.content;
  return /served by (V\d)/.exec(String(last))?.[1] ?? `unknown: ${JSON.stringify(out).slice(0, 200)}`;
}

/** Requests on the stable URL (a health check, a new thread, a thread read) until stopped; counts failures. */
function loadLoop() {
  let running = true;
  const failures: string[] = [];
  let ok = 0;
  const done = (async () => {
    while (running) {
      try {
        const thread = await json("/threads", {});
        await json(`/threads/${thread.thread_id}`);
        const health = await fetch(`${url}/ok`);
        await health.body?.cancel();
        if (health.status !== 200) throw new Error(`/ok: HTTP ${health.status}`);
        ok++;
      } catch (err) {
        failures.push(String(err));
      }
    }
  })();
  return { stop: async () => ((running = false), await done, { ok, failures }) };
}

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

before(async () => {
  model = await startModelServer();
  dataDir = await mkdtemp(join(tmpdir(), "agentcli-release-"));
  const root = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = `release_test_${process.pid}`;
  const admin = await openSql({ url: root, poolSize: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const dbUrl = new URL(root);
  dbUrl.searchParams.set("options", `-c search_path=${schema}`);
  dropSchema = async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  };
  platform = await openPlatform({
    dataDir,
    mode: "cloud",
    databaseUrl: dbUrl.toString(),
    onError: () => {},
    driver: await loadPlugins(builtinPlugins),
  });
  const tenant = await createTenant(platform.sql, `release-${Date.now()}`);
  key = (await createApiKey(platform.sql, { tenantId: tenant.id, userId: "releaser" })).key;
  const created = await call("POST", "/v2/deployments", { name: "release-e2e", source: "internal_source" });
  deploymentId = created.body.id;
  const first = await deploy("V1");
  assert.equal((await settled(first)).status, "DEPLOYED", await logs(first));
  url = (await call("GET", `/v2/deployments/${deploymentId}`)).body.url;
});

after(async () => {
  await platform?.close();
  await dropSchema();
  await model?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test("a revision whose eval gate fails never takes traffic, and no request fails meanwhile; one that passes does", async () => {
  const active = (await call("GET", `/v2/deployments/${deploymentId}`)).body.active_revision_id;
  answerByVersion(5);
  const load = loadLoop();
  const evalCase = {
    name: "names the right version",
    turns: [{ user: "which revision are you?" }],
    checks: [{ status: "success" }, { text_contains: "served by V1" }],
  };
  const bad = await deploy("V2", { gates: { smoke: true, evals: [evalCase] } });
  const failed = await settled(bad);
  const { ok, failures } = await load.stop();
  assert.equal(failed.status, "DEPLOY_FAILED");
  assert.match(
    failed.status_message,
    /gate evals failed: 1 of 1 eval cases failed \(names the right version: text_contains "served by V1": the answer does not contain it; it was "served by V2"\)/,
  );
  const log = await logs(bad);
  assert.match(log, /gate: \/ok answered 200/);
  assert.match(log, /gate: a smoke run through the Agent API succeeded/);
  assert.match(log, /gate: eval FAILED: names the right version/);
  assert.deepEqual(failures, []);
  assert.ok(ok > 0);
  const d = (await call("GET", `/v2/deployments/${deploymentId}`)).body;
  assert.equal(d.active_revision_id, active, "the previous revision keeps serving");
  assert.equal(await turn((await json("/threads", {})).thread_id), "V1");
  const revision = (await call("GET", `/v2/deployments/${deploymentId}/revisions/${bad}`)).body;
  assert.deepEqual(revision.release, {
    gates: { ok: true, smoke: true, evals: ["names the right version"] },
    canary_percent: null,
  });

  const good = await deploy("V1", { gates: { smoke: true, evals: [evalCase] } });
  assert.equal((await settled(good)).status, "DEPLOYED", await logs(good));
  assert.match(await logs(good), /gate: all 1 eval cases passed/);
  assert.equal(model.requests.filter((r) => r.model === "release-V2").length, 2, "V2 saw only its gate's runs");
});

test("a canary at 20% takes 20% of 200 new threads; each thread's turns stay on its revision; abort and promote", async () => {
  const before = await Promise.all(Array.from({ length: 10 }, async () => (await json("/threads", {})).thread_id));
  const canary = await deploy("V2", { canary_percent: 20 });
  const running = await settled(canary);
  assert.equal(running.status, "DEPLOYING");
  assert.equal(running.status_message, "canary: 20% of new threads; promote or abort it");
  assert.deepEqual((await call("GET", `/v2/deployments/${deploymentId}`)).body.canary, {
    revision_id: canary,
    percent: 20,
  });
  const threads: string[] = [];
  for (let i = 0; i < N_THREADS; i++) threads.push((await json("/threads", {})).thread_id);
  answerByVersion(2 * 200 + 2 * before.length + 10);
  const servedBy = new Map<string, string>();
  await pool(threads, 6, async (t) => void servedBy.set(t, await turn(t)));
  const onCanary = [...servedBy.values()].filter((v) => v === "V2").length;
  const histogram = [...servedBy.values()].reduce<Record<string, number>>((h, v) => ((h[v] = (h[v] ?? 0) + 1), h), {});
  const proxy =
    (platform.computes.get("local") as unknown as { deployments: Map<string, { proxy: { canaryState: unknown } }> })
      .deployments.get(deploymentId)?.proxy.canaryState;
  const tolerance = Math.ceil(N_THREADS * 0.05);
  assert.ok(
    Math.abs(onCanary - N_THREADS * 0.2) <= tolerance,
    `20% of ${N_THREADS} new threads within ±${tolerance}: ${JSON.stringify(histogram)} ${JSON.stringify(proxy)}`,
  );
  assert.equal([...servedBy.values()].filter((v) => v !== "V1" && v !== "V2").length, 0);
  // Every second turn of each thread, and the threads made before the canary, stay where they were.
  const moved: string[] = [];
  await pool([...threads, ...before], 6, async (t) => {
    const again = await turn(t);
    const first = servedBy.get(t) ?? "V1";
    if (again !== first) moved.push(`${t}: ${first} then ${again}`);
  });
  assert.deepEqual(moved, []);

  assert.equal((await call("POST", `/v2/deployments/${deploymentId}/canary/abort`)).status, 200);
  const aborted = (await call("GET", `/v2/deployments/${deploymentId}/revisions/${canary}`)).body;
  assert.deepEqual([aborted.status, aborted.status_message], ["INTERRUPTED", "the canary was aborted"]);
  const canaryThread = threads.find((t) => servedBy.get(t) === "V2")!;
  assert.equal(await turn(canaryThread), "V1", "after an abort the canary's threads go on on the serving revision");
  const again = await call("POST", `/v2/deployments/${deploymentId}/canary/abort`);
  assert.equal(again.status, 409);
  assert.match(again.body.message ?? JSON.stringify(again.body), /runs no canary/);

  const next = await deploy("V3", { canary_percent: 50 });
  await settled(next);
  // Another replica's poll (or the rollout that started the canary) holds the deployment for a
  // moment: promote waits for it instead of answering 409.
  const lease = { deploymentId, holder: "another-replica", ttlMs: 1500 };
  assert.ok(await acquireLease(platform.sql, lease));
  const promoted = await call("POST", `/v2/deployments/${deploymentId}/canary/promote`);
  assert.equal(promoted.status, 200, JSON.stringify(promoted.body));
  assert.equal(promoted.body.active_revision_id, next);
  assert.equal(promoted.body.canary, null);
  assert.equal((await call("GET", `/v2/deployments/${deploymentId}/revisions/${next}`)).body.status, "DEPLOYED");
  assert.equal(await turn(before[0]!), "V3", "after promote every thread is on the new revision");
});

test("a rollback under a load loop loses no request and serves the earlier build again, as a new revision", async () => {
  const revisions = (await call("GET", `/v2/deployments/${deploymentId}/revisions?limit=100`)).body.resources;
  const v1 = revisions.findLast((r: { status: string }) => r.status === "INTERRUPTED")!;
  answerByVersion(3);
  const load = loadLoop();
  const rolled = await call("POST", `/v2/deployments/${deploymentId}/rollback`, { revision_id: v1.id });
  assert.equal(rolled.status, 201, JSON.stringify(rolled.body));
  assert.equal(rolled.body.rollback_of, v1.id);
  const done = await settled(rolled.body.id);
  const { ok, failures } = await load.stop();
  assert.equal(done.status, "DEPLOYED", await logs(rolled.body.id));
  assert.deepEqual(failures, [], "no request failed during the rollback");
  assert.ok(ok > 0);
  assert.equal(await turn((await json("/threads", {})).thread_id), "V1");
  const build = await call("GET", `/v2/deployments/${deploymentId}/revisions/${rolled.body.id}/logs?kind=build`);
  assert.match(build.body.logs.map((l: { message: string }) => l.message).join("\n"), /reusing the build/);
  const never = revisions.find((r: { status: string }) => r.status === "DEPLOY_FAILED")!;
  const refused = await call("POST", `/v2/deployments/${deploymentId}/rollback`, { revision_id: never.id });
  assert.equal(refused.status, 409);
});

/** Runs `agentcli deploy <args>` in a project named like the deployment, against the listening control plane. */
function deployCli(args: string[], base: string): Promise<{ code: number | null; out: string }> {
  const dir = makeProject({ "agent.toml": agentToml("V1"), ".env": "" });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "deploy", "--platform-url", base, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PLATFORM_API_KEY: key },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => {
      removeProject(dir);
      resolve({ code, out });
    });
  });
}

test("agentcli deploy --rollback, --abort and --promote act on the project's deployment without building", async () => {
  const { url: base } = await platform.listen({ port: 0, host: "127.0.0.1" });
  const together = await deployCli(["--promote", "--abort"], base);
  assert.equal(together.code, 2, together.out);
  assert.match(together.out, /--promote, --abort do not go together/);
  const none = await deployCli(["--abort"], base);
  assert.equal(none.code, 1, none.out);
  assert.match(none.out, /Cannot abort the canary of deployment "release-e2e": it runs no canary/);
  const revisions = (await call("GET", `/v2/deployments/${deploymentId}/revisions?limit=100`)).body.resources;
  const target = revisions.find((r: { rollback_of: string | null; status: string }) =>
    r.status === "INTERRUPTED" && r.rollback_of === null
  )!;
  const rolled = await deployCli(["--rollback", target.id], base);
  assert.equal(rolled.code, 0, rolled.out);
  const id = /new revision (\S+) serves its build/.exec(rolled.out)?.[1];
  assert.ok(id, rolled.out);
  assert.equal((await settled(id)).status, "DEPLOYED", await logs(id));
  assert.equal((await call("GET", `/v2/deployments/${deploymentId}/revisions/${id}`)).body.rollback_of, target.id);
});
