/**
 * The per-revision log endpoint's long-poll (`wait=`): a reader that is already waiting gets
 * the lines a rollout writes after it started waiting; with nothing new it answers empty at
 * its timeout with the same cursor. The compute is a held one (the `computeFor` seam): its
 * rollout stays DEPLOYING and writes deploy lines when the test says so. The reads of the log
 * table are observed (not changed) to know when the reader is waiting.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { ComputeDriver, RolloutRequest } from "../../core/kernel/index.ts";
import type { SqlResult } from "../../core/storage/sql.ts";
import { startTestPlatform, type TestPlatform, until } from "./_harness.ts";

class HeldCompute implements ComputeDriver {
  readonly kind = "held";
  rollouts: RolloutRequest[] = [];
  private held: Array<() => void> = [];
  async provision(): Promise<void> {}
  async rollout(req: RolloutRequest): Promise<{ url: string | null }> {
    this.rollouts.push(req);
    await new Promise<void>((resolve, reject) => {
      this.held.push(resolve);
      req.signal.addEventListener("abort", () => reject(new Error("interrupted")), { once: true });
    });
    return { url: null };
  }
  release(): void {
    for (const r of this.held.splice(0)) r();
  }
  async teardown(): Promise<void> {}
  async close(): Promise<void> {}
}

const compute = new HeldCompute();
let t: TestPlatform;
/** Called with the row count of each read of a revision's log lines. */
const logReads = new Map<string, (rows: number) => void>();

before(async () => {
  t = await startTestPlatform({ computeFor: () => compute });
  const sql = t.platform.sql;
  const query = sql.query.bind(sql);
  sql.query = (async (text: string, params?: unknown[]) => {
    const res = await query(text, params) as SqlResult<unknown>;
    if (text.includes("FROM platform_revision_logs")) logReads.get(String(params?.[0]))?.(res.rows.length);
    return res;
  }) as typeof sql.query;
});
after(async () => {
  compute.release();
  await t?.close();
});

test("wait=: a waiting reader receives lines appended after it started waiting; at its timeout it returns with nothing new", async () => {
  const created = await t.call("POST", "/v2/deployments", {
    body: {
      name: "logs-follow",
      source: "internal_container",
      source_revision_config: { image_uri: "registry.example/agent:1" },
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const revisionId: string = created.body.latest_revision_id;
  const logsPath = `/v2/deployments/${created.body.id}/revisions/${revisionId}/logs`;
  const rollout = await until(
    async () => compute.rollouts.find((r) => r.revision.id === revisionId),
    "the rollout to start",
  );

  // The reader waits (kind=deploy: nothing of that kind is written before the rollout logs).
  let emptyReads = 0;
  let waiting!: () => void;
  const isWaiting = new Promise<void>((r) => (waiting = r));
  logReads.set(revisionId, (rows) => {
    if (rows === 0 && ++emptyReads === 1) waiting();
  });
  const reader = t.call("GET", `${logsPath}?kind=deploy&wait=30`);
  await isWaiting;
  rollout.log("deploy", "health check: waiting for /ok");
  const got = await reader;
  assert.equal(got.status, 200);
  assert.deepEqual(got.body.logs.map((l: { kind: string; message: string }) => [l.kind, l.message]), [[
    "deploy",
    "health check: waiting for /ok",
  ]]);
  assert.equal(got.body.after, got.body.logs[0].id);
  assert.equal(got.body.status, "DEPLOYING");

  // Nothing new: the reader keeps polling until its timeout, then answers empty with the same cursor.
  emptyReads = 0;
  const idle = await t.call("GET", `${logsPath}?kind=deploy&after=${got.body.after}&wait=1`);
  assert.equal(idle.status, 200);
  assert.deepEqual(idle.body.logs, []);
  assert.equal(idle.body.after, got.body.after);
  assert.equal(idle.body.status, "DEPLOYING");
  assert.ok(emptyReads > 1, `the reader polled while it waited (${emptyReads} reads)`);

  // A line of another kind does not end a wait for deploy lines; the cursor without a kind gets it.
  rollout.log("build", "a build line");
  const build = await until(
    async () => (await t.call("GET", `${logsPath}?after=${got.body.after}`)).body.logs[0],
    "the build line",
  );
  assert.equal(build.message, "a build line");
  assert.deepEqual((await t.call("GET", `${logsPath}?kind=deploy&after=${got.body.after}&wait=1`)).body.logs, []);

  // A finished revision answers at once, even with a long wait and nothing new.
  compute.release();
  await until(
    async () =>
      (await t.call("GET", `/v2/deployments/${created.body.id}/revisions/${revisionId}`)).body.status === "DEPLOYED",
    "DEPLOYED",
  );
  const done = await t.call("GET", `${logsPath}?kind=deploy&wait=30`);
  const last = done.body.logs.at(-1).id;
  emptyReads = 0;
  const final = await t.call("GET", `${logsPath}?kind=deploy&after=${last}&wait=30`);
  assert.deepEqual([final.body.logs, final.body.status], [[], "DEPLOYED"]);
  assert.equal(emptyReads, 1, "no polling once the revision is final");
  logReads.delete(revisionId);
});

test("wait= must be a number of seconds", async () => {
  const created = await t.call("POST", "/v2/deployments", {
    body: {
      name: "logs-wait-bad",
      source: "internal_container",
      source_revision_config: { image_uri: "registry.example/agent:1" },
    },
  });
  const bad = await t.call(
    "GET",
    `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}/logs?wait=soon`,
  );
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body.detail[0].loc, ["query", "wait"]);
});
