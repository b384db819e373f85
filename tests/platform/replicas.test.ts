/**
 * Two control-plane instances on one real PostgreSQL (a schema of its own): they never roll
 * out the same revision, never run two rollouts of one deployment at once, take over work a
 * stopped replica left behind once its lease expires, and stop a rollout whose lease was lost.
 * The compute is a recording one (the test seam `computeFor`), so what each replica rolled out
 * is known exactly.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPlatform, type Platform } from "../../core/platform/server.ts";
import type { ComputeDriver, RolloutRequest } from "../../core/kernel/index.ts";
import { openSql, type SqlDriver } from "../../core/storage/sql.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { until } from "./_harness.ts";

const ROOT = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

interface Rollout {
  replica: string;
  deployment: string;
  revision: string;
}

const rollouts: Rollout[] = [];
const activePerDeployment = new Map<string, number>();
let maxActive = 0;
/** Deployments whose rollouts wait until interrupted (default: a short hold, so rollouts overlap in time). */
const holdForever = new Set<string>();

class RecordingCompute implements ComputeDriver {
  readonly kind = "recording";
  readonly replica: string;
  constructor(replica: string) {
    this.replica = replica;
  }
  async provision(): Promise<void> {}
  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    const id = req.deployment.id;
    rollouts.push({ replica: this.replica, deployment: id, revision: req.revision.id });
    const n = (activePerDeployment.get(id) ?? 0) + 1;
    activePerDeployment.set(id, n);
    maxActive = Math.max(maxActive, n);
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = holdForever.has(id) ? null : setTimeout(resolve, 150);
        req.signal.addEventListener("abort", () => {
          if (timer) clearTimeout(timer);
          reject(new Error("interrupted"));
        }, { once: true });
      });
    } finally {
      activePerDeployment.set(id, activePerDeployment.get(id)! - 1);
    }
    return { url: `http://${this.replica}.example/${id}` };
  }
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
}

let admin: SqlDriver;
let schema = "";
let a: Platform;
let b: Platform;
let key = "";
const dirs: string[] = [];

async function instance(name: string, url: string): Promise<Platform> {
  const dataDir = await mkdtemp(join(tmpdir(), `agentcli-replica-${name}-`));
  dirs.push(dataDir);
  const compute = new RecordingCompute(name);
  // Renewed every leaseMs / 3: 4 s lets a loaded machine stall a renewal by over 2 s before a
  // healthy replica's lease is lost (900 ms lost it under CI's load and failed the first test).
  return openPlatform({
    dataDir,
    databaseUrl: url,
    mode: "cloud",
    computeFor: () => compute,
    onError: () => {},
    reconcile: { leaseMs: 4000, pollMs: 100 },
  });
}

async function call(p: Platform, method: string, path: string, body?: unknown): Promise<any> {
  const res = await p.app.request(path, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function revisions(
  deploymentId: string,
): Promise<Array<{ id: string; status: string; status_message: string | null }>> {
  return (await call(a, "GET", `/v2/deployments/${deploymentId}/revisions?limit=100`)).body.resources;
}

const FINAL = ["DEPLOYED", "SKIPPED", "INTERRUPTED", "DEPLOY_FAILED", "BUILD_FAILED", "CREATE_FAILED"];

before(async () => {
  schema = `platform_replicas_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  admin = await openSql({ url: ROOT, poolSize: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(ROOT);
  url.searchParams.set("options", `-c search_path=${schema}`);
  // Both start (and migrate) at once, like two replicas behind a load balancer.
  [a, b] = await Promise.all([instance("a", url.toString()), instance("b", url.toString())]);
  const tenant = await createTenant(a.sql, "replicas");
  key = (await createApiKey(a.sql, { tenantId: tenant.id, userId: "alice" })).key;
});

after(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test("two replicas told about the same changes never roll out one revision twice, nor one deployment twice at once", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const c = await call(a, "POST", "/v2/deployments", {
      name: `rep-${i}`,
      source: "internal_container",
      source_revision_config: { image_uri: `r/a:${i}` },
    });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    ids.push(c.body.id);
    b.services.reconciler.notify(c.body.id);
  }
  for (let round = 1; round <= 2; round++) {
    for (const id of ids) {
      const p = await call(b, "PATCH", `/v2/deployments/${id}`, {
        source_revision_config: { image_uri: `r/a:${round}-${id.slice(0, 4)}` },
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      a.services.reconciler.notify(id);
    }
  }
  for (const id of ids) {
    await until(async () => (await revisions(id)).every((r) => FINAL.includes(r.status)), `revisions of ${id} to end`);
  }
  const deployedCount = new Map<string, number>();
  for (const r of rollouts) deployedCount.set(r.revision, (deployedCount.get(r.revision) ?? 0) + 1);
  for (const [revision, n] of deployedCount) assert.equal(n, 1, `revision ${revision} was rolled out ${n} times`);
  assert.equal(maxActive, 1, "two rollouts of one deployment overlapped");
  for (const id of ids) {
    const revs = await revisions(id);
    const d = (await call(b, "GET", `/v2/deployments/${id}`)).body;
    assert.equal(revs[0]!.status, "DEPLOYED", JSON.stringify(revs));
    assert.equal(d.active_revision_id, revs[0]!.id);
    for (const [i, r] of revs.entries()) {
      // Rolled out once and since replaced by a newer one: INTERRUPTED, naming it (only the newest stays DEPLOYED).
      const superseded = r.status === "INTERRUPTED" && /^superseded by revision /.test(r.status_message ?? "");
      assert.ok(
        (r.status === "DEPLOYED" && i === 0) || r.status === "SKIPPED" || superseded,
        `${r.id}: ${r.status} ${r.status_message}`,
      );
      assert.equal(deployedCount.get(r.id) ?? 0, r.status === "DEPLOYED" || superseded ? 1 : 0);
    }
  }
  const { rows } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.platform_reconcile_leases`);
  assert.equal(Number(rows[0]!.n), 0, "leases are released once the work is done");
});

test("a rollout left by a replica that stopped is INTERRUPTED once its lease expires; the next revision rolls out", async () => {
  const c = await call(a, "POST", "/v2/deployments", {
    name: "rep-orphan",
    source: "internal_container",
    source_revision_config: { image_uri: "r/o:1" },
  });
  const id = c.body.id;
  await until(async () => (await revisions(id))[0]?.status === "DEPLOYED", "first revision DEPLOYED");
  // A replica that died mid-rollout: its lease is still valid for a moment, its revision is DEPLOYING.
  await admin.query(
    `INSERT INTO ${schema}.platform_reconcile_leases (deployment_id, holder, expires_at) VALUES ($1, 'ghost', now() + interval '1500 milliseconds')
     ON CONFLICT (deployment_id) DO UPDATE SET holder = 'ghost', expires_at = EXCLUDED.expires_at`,
    [id],
  );
  const p = await call(b, "PATCH", `/v2/deployments/${id}`, { source_revision_config: { image_uri: "r/o:2" } });
  const orphan = p.body.latest_revision_id;
  await admin.query(`UPDATE ${schema}.platform_revisions SET status = 'DEPLOYING' WHERE id = $1`, [orphan]);
  a.services.reconciler.notify(id);
  const ended = await until(
    async () => (await revisions(id)).find((r) => r.id === orphan && r.status !== "DEPLOYING"),
    "the orphan to be taken over",
  );
  assert.equal(ended.status, "INTERRUPTED");
  assert.match(ended.status_message ?? "", /control plane stopped/);
  assert.ok(!rollouts.some((r) => r.revision === orphan), "nobody rolled out the revision the ghost held");
  const logs = await call(a, "GET", `/v2/deployments/${id}/revisions/${orphan}/logs`);
  assert.ok(logs.body.logs.some((l: { message: string }) => /INTERRUPTED/.test(l.message)));
  const next = await call(a, "PATCH", `/v2/deployments/${id}`, { source_revision_config: { image_uri: "r/o:3" } });
  await until(
    async () => (await revisions(id)).find((r) => r.id === next.body.latest_revision_id && r.status === "DEPLOYED"),
    "the next revision DEPLOYED",
  );
  assert.equal((await call(b, "GET", `/v2/deployments/${id}`)).body.active_revision_id, next.body.latest_revision_id);
});

test("a replica whose lease is taken stops its rollout: the revision ends INTERRUPTED and never becomes active", async () => {
  const c = await call(a, "POST", "/v2/deployments", {
    name: "rep-stolen",
    source: "internal_container",
    source_revision_config: { image_uri: "r/s:1" },
  });
  const id = c.body.id;
  await until(async () => (await revisions(id))[0]?.status === "DEPLOYED", "first revision DEPLOYED");
  const first = (await call(a, "GET", `/v2/deployments/${id}`)).body.active_revision_id;
  holdForever.add(id);
  const p = await call(a, "PATCH", `/v2/deployments/${id}`, { source_revision_config: { image_uri: "r/s:2" } });
  const held = p.body.latest_revision_id;
  await until(async () => rollouts.some((r) => r.revision === held), "the rollout to start");
  // Another holder takes the lease (as one would after this replica stalled past its expiry).
  await admin.query(
    `UPDATE ${schema}.platform_reconcile_leases SET holder = 'thief', expires_at = now() + interval '1 second' WHERE deployment_id = $1`,
    [id],
  );
  const ended = await until(
    async () => (await revisions(id)).find((r) => r.id === held && FINAL.includes(r.status)),
    "the stalled rollout to stop",
  );
  assert.equal(ended.status, "INTERRUPTED");
  assert.equal((await call(a, "GET", `/v2/deployments/${id}`)).body.active_revision_id, first);
  holdForever.delete(id);
  const next = await call(b, "PATCH", `/v2/deployments/${id}`, { source_revision_config: { image_uri: "r/s:3" } });
  await until(
    async () => (await revisions(id)).find((r) => r.id === next.body.latest_revision_id && r.status === "DEPLOYED"),
    "the next revision DEPLOYED",
  );
});
