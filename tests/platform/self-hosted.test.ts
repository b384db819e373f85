import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startTestPlatform, type TestPlatform, until } from "./_harness.ts";

let t: TestPlatform;
let listenerId = "";
before(async () => {
  t = await startTestPlatform({ mode: "self-hosted" });
  listenerId = (await t.call("POST", "/v2/listeners", {
    body: { compute_type: "k8s", compute_id: "onprem", compute_config: { k8s_namespaces: ["agents"] } },
  })).body.id;
});
after(async () => {
  await t?.close();
});

test("self-hosted mode refuses the cloud-only sources", async () => {
  for (const source of ["repohost", "internal_container", "internal_source", "internal_template"]) {
    const r = await t.call("POST", "/v2/deployments", { body: { name: `sh-${source.replace("_", "-")}`, source } });
    assert.equal(r.status, 422, source);
    assert.ok(
      r.body.detail.some((d: { loc: string[]; type: string }) =>
        d.loc.join(".") === "body.source" && d.type === "source_not_allowed"
      ),
      JSON.stringify(r.body),
    );
  }
});

test("external_container needs image_uri and a listener, and alone takes secret_references", async () => {
  const noImage = await t.call("POST", "/v2/deployments", {
    body: { name: "ext-1", source: "external_container", source_config: { listener_id: listenerId } },
  });
  assert.equal(noImage.status, 422);
  assert.deepEqual(noImage.body.detail.map((d: { loc: string[] }) => d.loc.join(".")), [
    "body.source_revision_config.image_uri",
  ]);
  const noListener = await t.call("POST", "/v2/deployments", {
    body: { name: "ext-2", source: "external_container", source_revision_config: { image_uri: "r/a:1" } },
  });
  assert.equal(noListener.status, 422);
  assert.deepEqual(noListener.body.detail.map((d: { loc: string[] }) => d.loc.join(".")), [
    "body.source_config.listener_id",
  ]);
  const ok = await t.call("POST", "/v2/deployments", {
    body: {
      name: "ext-3",
      source: "external_container",
      source_config: { listener_id: listenerId },
      source_revision_config: { image_uri: "r/a:1" },
      secret_references: [{ name: "DB", secret_name: "db", secret_key: "url" }],
    },
  });
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  assert.deepEqual(ok.body.secret_references, [{ name: "DB", secret_name: "db", secret_key: "url" }]);
  const patched = await t.call("PATCH", `/v2/deployments/${ok.body.id}`, {
    body: { revision_source: "internal_source", source_revision_config: { source_tarball_path: "uploads/x" } },
  });
  assert.equal(patched.status, 422, "revision_source internal_source is cloud-only");
  const r = await until(async () => {
    const x = await t.call("GET", `/v2/deployments/${ok.body.id}/revisions/${ok.body.latest_revision_id}`);
    return x.body.status === "DEPLOY_FAILED" ? x.body : null;
  }, "DEPLOY_FAILED without kubeconfig");
  assert.match(r.status_message, /kubeconfig/);
  const list = await t.call("GET", "/v2/deployments?remote_reconciled=true");
  assert.deepEqual(list.body.resources.map((d: { name: string }) => d.name), ["ext-3"]);
});

test("redeploy accepts only a revision that reached DEPLOYED", async () => {
  const d = (await t.call("GET", "/v2/deployments?name_contains=ext-3")).body.resources[0];
  const r = await t.call("POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/redeploy`);
  assert.equal(r.status, 409);
  assert.match(r.body.detail, /DEPLOY_FAILED/);
  assert.equal(
    (await t.call("POST", `/v2/deployments/${d.id}/revisions/3f1e9d3c-1111-4222-8333-444455556666/redeploy`)).status,
    404,
  );
});
