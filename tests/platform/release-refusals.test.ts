/**
 * Release safety's refusals (issue 37), on a compute that declares no `releases` (a recording
 * one, as a third-party compute may be): gates and canaries are
 * refused with the reason before the compute is asked; `release` without a new revision, a bad share, an unknown
 * rollback target, promote without a canary are 4xx naming what is wrong.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { RecordingCompute, startTestPlatform, type TestPlatform, until } from "./_harness.ts";

const compute = new RecordingCompute();
let t: TestPlatform;
let id = "";
let first = "";

before(async () => {
  t = await startTestPlatform({ computeFor: () => compute });
  const d = await t.call("POST", "/v2/deployments", {
    body: { name: "refusals", source: "internal_container", source_revision_config: { image_uri: "r.example/a:1" } },
  });
  assert.equal(d.status, 201, JSON.stringify(d.body));
  id = d.body.id;
  first = d.body.latest_revision_id;
  await settled(first);
});
after(() => t?.close());

async function settled(revisionId: string) {
  return await until(async () => {
    const r = await t.call("GET", `/v2/deployments/${id}/revisions/${revisionId}`);
    return ["DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED"].includes(r.body.status) ? r.body : null;
  }, `revision ${revisionId} ends`);
}

async function patch(tag: string, release: unknown) {
  return await t.call("PATCH", `/v2/deployments/${id}`, {
    body: { source_revision_config: { image_uri: `r.example/a:${tag}` }, release },
  });
}

test("a compute without release support refuses gates and canaries with the reason; the previous revision keeps serving", async () => {
  const rollouts = compute.rollouts.length;
  const gated = await patch("2", { gates: { smoke: true } });
  assert.equal(gated.status, 200, JSON.stringify(gated.body));
  const g = await settled(gated.body.latest_revision_id);
  assert.deepEqual([g.status, g.status_message], [
    "DEPLOY_FAILED",
    'the "recording" compute does not check revisions before traffic; deploy without gates',
  ]);
  const canary = await patch("3", { canary_percent: 20 });
  const c = await settled(canary.body.latest_revision_id);
  assert.deepEqual([c.status, c.status_message], [
    "DEPLOY_FAILED",
    'the "recording" compute does not run canaries; deploy without a canary share',
  ]);
  assert.equal(compute.rollouts.length, rollouts, "the compute was never asked");
  assert.equal((await t.call("GET", `/v2/deployments/${id}`)).body.active_revision_id, first);
});

test("bad release requests are 4xx naming what is wrong", async () => {
  const share = await patch("4", { canary_percent: 100 });
  assert.equal(share.status, 422);
  assert.match(JSON.stringify(share.body), /canary_percent/);
  const unknownKey = await patch("4", { gates: { smoke: true, lint: true } });
  assert.equal(unknownKey.status, 422);
  assert.match(JSON.stringify(unknownKey.body), /lint/);
  const noRevision = await t.call("PATCH", `/v2/deployments/${id}`, { body: { release: { gates: { smoke: true } } } });
  assert.equal(noRevision.status, 422);
  assert.match(JSON.stringify(noRevision.body), /release.*applies to a new revision/);
  const badCase = await patch("4", { gates: { evals: [{ name: "x", turns: [], checks: [{ status: "success" }] }] } });
  assert.equal(badCase.status, 422);
  assert.match(JSON.stringify(badCase.body), /turns/);
  const missing = await t.call("POST", `/v2/deployments/${id}/rollback`, {
    body: { revision_id: "00000000-0000-4000-8000-000000000000" },
  });
  assert.equal(missing.status, 404);
  const notUuid = await t.call("POST", `/v2/deployments/${id}/rollback`, { body: { revision_id: "latest" } });
  assert.equal(notUuid.status, 422);
  assert.match(JSON.stringify(notUuid.body), /revision_id/);
  const promote = await t.call("POST", `/v2/deployments/${id}/canary/promote`);
  assert.equal(promote.status, 409);
  assert.match(
    JSON.stringify(promote.body),
    /Cannot promote the canary of deployment \\"refusals\\": it runs no canary/,
  );
});
