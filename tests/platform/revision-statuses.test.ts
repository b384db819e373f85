/**
 * One revision per deployment reports DEPLOYED: the one that serves (issue 31, item 5). A
 * revision a newer one replaced becomes INTERRUPTED, "superseded by revision <id>", with a log
 * line, and can still be rolled back to; a revision that never served cannot. A control plane
 * upgraded from one that left several DEPLOYED revisions corrects them (migration 6). A deploy
 * whose revision went live and was superseded before it looked succeeds with a warning. The
 * compute is a recording one (the `computeFor` seam); the reconciler and the API are real.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { PLATFORM_MIGRATIONS } from "../../core/platform/store/migrations.ts";
import deployPlatform from "../../plugins/deploy/platform.ts";
import { makeBundle, RecordingCompute, startTestPlatform, type TestPlatform, until } from "./_harness.ts";

const compute = new RecordingCompute();
compute.fail = (req) => (req.imageUri?.endsWith(":broken") ? "the container never became healthy" : null);
let t: TestPlatform;
let base = "";
before(async () => {
  t = await startTestPlatform({ computeFor: () => compute });
  base = (await t.platform.listen({ port: 0 })).url;
  t.platform.services.publicUrl = base;
});
after(() => t?.close());

const ENDS = ["DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED", "CREATE_FAILED", "INTERRUPTED", "SKIPPED"];
async function settled(deploymentId: string, revisionId: string) {
  return until(async () => {
    const r = await t.call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    return ENDS.includes(r.body.status) ? r.body : null;
  }, `revision ${revisionId} ends`);
}
async function image(id: string, tag: string): Promise<string> {
  const p = await t.call("PATCH", `/v2/deployments/${id}`, {
    body: { source_revision_config: { image_uri: `registry.example/agent:${tag}` } },
  });
  assert.equal(p.status, 200, JSON.stringify(p.body));
  return p.body.latest_revision_id;
}
const status = async (id: string, rid: string) => (await t.call("GET", `/v2/deployments/${id}/revisions/${rid}`)).body;

test("a superseded revision is INTERRUPTED naming its successor; only the serving one is DEPLOYED", async () => {
  const d = await t.call("POST", "/v2/deployments", {
    body: {
      name: "statuses",
      source: "internal_container",
      source_revision_config: { image_uri: "registry.example/agent:1" },
    },
  });
  assert.equal(d.status, 201, JSON.stringify(d.body));
  const id: string = d.body.id;
  const first: string = d.body.latest_revision_id;
  assert.equal((await settled(id, first)).status, "DEPLOYED");
  const second = await image(id, "2");
  assert.equal((await settled(id, second)).status, "DEPLOYED");

  const old = await status(id, first);
  assert.equal(old.status, "INTERRUPTED");
  assert.equal(old.status_message, `superseded by revision ${second}`);
  const logs = (await t.call("GET", `/v2/deployments/${id}/revisions/${first}/logs`)).body.logs;
  assert.ok(
    logs.some((l: { message: string }) =>
      l.message === `INTERRUPTED: superseded by revision ${second}, which now serves`
    ),
    JSON.stringify(logs),
  );
  const deployed = await t.call("GET", `/v2/deployments/${id}/revisions?status=DEPLOYED`);
  assert.deepEqual(
    deployed.body.resources.map((r: { id: string }) => r.id),
    [second],
    "only the serving revision is DEPLOYED",
  );
  assert.equal((await t.call("GET", `/v2/deployments/${id}`)).body.active_revision_id, second);

  // A failed rollout supersedes nothing: the serving revision stays DEPLOYED.
  const broken = await image(id, "broken");
  assert.equal((await settled(id, broken)).status, "DEPLOY_FAILED");
  assert.equal((await status(id, second)).status, "DEPLOYED");

  // Rollback to the superseded revision: it served, so it may; the one it replaces is superseded in turn.
  const back = await t.call("POST", `/v2/deployments/${id}/revisions/${first}/redeploy`);
  assert.equal(back.status, 201, JSON.stringify(back.body));
  assert.equal((await settled(id, back.body.id)).status, "DEPLOYED");
  assert.equal((await status(id, second)).status, "INTERRUPTED");
  assert.equal((await status(id, second)).status_message, `superseded by revision ${back.body.id}`);
  // A revision that never served cannot be rolled back to.
  const refused = await t.call("POST", `/v2/deployments/${id}/revisions/${broken}/redeploy`);
  assert.equal(refused.status, 409);
  assert.match(
    refused.body.detail,
    /it is DEPLOY_FAILED and never served; only a revision that reached DEPLOYED \(serving now, or superseded since\) can be rolled back to/,
  );
});

test("upgrading a control plane that left several revisions DEPLOYED keeps only the active one DEPLOYED", async () => {
  const d = await t.call("POST", "/v2/deployments", {
    body: {
      name: "upgraded",
      source: "internal_container",
      source_revision_config: { image_uri: "registry.example/agent:1" },
    },
  });
  const id: string = d.body.id;
  const first: string = d.body.latest_revision_id;
  await settled(id, first);
  const second = await image(id, "2");
  await settled(id, second);
  // The state the old code left: both DEPLOYED, no deployed_at.
  await t.platform.sql.query(
    "UPDATE platform_revisions SET status = 'DEPLOYED', status_message = NULL, deployed_at = NULL WHERE deployment_id = $1",
    [id],
  );
  for (const statement of PLATFORM_MIGRATIONS.find((m) => m.version === 6)!.up.split(/;\s*\n/)) {
    await t.platform.sql.query(statement);
  }
  assert.equal((await status(id, second)).status, "DEPLOYED");
  assert.equal((await status(id, first)).status, "INTERRUPTED");
  assert.equal((await status(id, first)).status_message, `superseded by revision ${second}`);
  assert.equal(
    (await t.call("POST", `/v2/deployments/${id}/revisions/${first}/redeploy`)).status,
    201,
    "it served, so rollback may return to it",
  );
});

test("deploy succeeds, with a warning, when its revision went live and a newer one replaced it before deploy looked", async () => {
  // During this deploy's rollout a secrets patch makes a newer revision, which rolls out right after it.
  let newer = "";
  compute.during.set("raced", async (req) => {
    const p = await t.call("PATCH", `/v2/deployments/${req.deployment.id}`, {
      body: { secrets: [{ name: "A", value: "newer" }] },
    });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    newer = p.body.latest_revision_id;
  });
  // deploy's reads of its revision that would see it DEPLOYED wait until the newer one serves:
  // deploy looks only after it was replaced (the SQL seam, as in logs-follow.test.ts).
  const sql = t.platform.sql;
  const query = sql.query.bind(sql);
  sql.query = (async (text: string, params?: unknown[]) => {
    const res = await query(text, params) as { rows: Array<{ id?: string; status?: string }> };
    const row = res.rows[0];
    if (
      !newer || row?.status !== "DEPLOYED" || row.id === newer || !/FROM platform_revisions WHERE/.test(text) ||
      !text.includes("id = $2")
    ) return res;
    await until(
      async () =>
        (await query("SELECT status FROM platform_revisions WHERE id = $1", [newer]) as {
          rows: Array<{ status: string }>;
        }).rows[0]?.status === "DEPLOYED",
      "the newer revision serves",
    );
    return query(text, params);
  }) as typeof sql.query;
  const lines: string[] = [];
  try {
    const result = await deployPlatform.hooks["deploy:target"]!({
      target: "platform",
      bundle: await makeBundle({ name: "raced" }),
      name: "raced",
      secrets: [],
      env: { AGENTCLI_PLATFORM_URL: base, PLATFORM_API_KEY: t.keyA },
      projectDir: "/nonexistent",
      executable: null,
      version: "0",
      log: { info: (m) => void lines.push(m), warn: (m) => void lines.push(`warn: ${m}`) },
    });
    assert.ok(result, "the platform target answered");
    assert.equal(result.status, "INTERRUPTED");
    assert.equal(
      (await t.call("GET", `/v2/deployments/${result.deploymentId}`)).body.active_revision_id,
      newer,
      "the newer revision serves",
    );
    assert.ok(
      lines.includes(
        `warn: revision ${result.revisionId} went live and was then superseded by revision ${newer} (made since this deploy started)`,
      ),
      lines.join("\n"),
    );
  } finally {
    sql.query = query;
  }
});
