import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startTestPlatform, type TestPlatform, until } from "./_harness.ts";
import { createIntegration, createToken } from "../../core/platform/store/tenancy.ts";

let t: TestPlatform;
before(async () => {
  t = await startTestPlatform();
});
after(async () => {
  await t?.close();
});

const container = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  source: "internal_container",
  source_revision_config: { image_uri: "registry.example/agent:1" },
  ...extra,
});

describe("auth and errors", () => {
  test("/ok needs no key; everything else needs a valid X-Api-Key", async () => {
    assert.equal((await t.call("GET", "/ok", { key: null })).status, 200);
    const missing = await t.call("GET", "/v2/deployments", { key: null });
    assert.equal(missing.status, 401);
    assert.match(missing.body.detail, /X-Api-Key/);
    assert.equal((await t.call("GET", "/v2/deployments", { key: "acp_wrong" })).status, 401);
    assert.equal(
      (await t.call("GET", "/v1/integrations/repohost/00000000-0000-4000-8000-000000000000/repos", { key: null }))
        .status,
      401,
    );
  });

  test("invalid JSON and non-object bodies are 422 with a loc list", async () => {
    const bad = await t.call("POST", "/v2/deployments", { raw: "{nope" });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ["body"]);
    const arr = await t.call("POST", "/v2/deployments", { raw: "[1]" });
    assert.equal(arr.status, 422);
  });

  test("unknown fields and wrong types name the field", async () => {
    const r = await t.call("POST", "/v2/deployments", {
      body: { name: "x", source: "internal_container", colour: "red", source_revision_config: { image_uri: 5 } },
    });
    assert.equal(r.status, 422);
    const locs = r.body.detail.map((d: { loc: string[] }) => d.loc.join("."));
    assert.ok(locs.includes("body"), locs.join());
    assert.ok(locs.includes("body.source_revision_config.image_uri"), locs.join());
    for (const d of r.body.detail) assert.equal(typeof d.msg, "string");
  });

  test("404 names the missing id; unknown routes are JSON 404", async () => {
    const id = "3f1e9d3c-1111-4222-8333-444455556666";
    const r = await t.call("PATCH", `/v2/deployments/${id}`, { body: {} });
    assert.equal(r.status, 404);
    assert.match(r.body.detail, new RegExp(id));
    const notUuid = await t.call("GET", `/v2/deployments/not-a-uuid/revisions`);
    assert.equal(notUuid.status, 404);
    assert.equal((await t.call("GET", "/v3/nothing")).status, 404);
  });
});

describe("deployments", () => {
  test("create answers 201 with the resource; secrets are redacted; a tracing project is recorded", async () => {
    const r = await t.call("POST", "/v2/deployments", {
      body: container("create-1", { secrets: [{ name: "OPENAI_API_KEY", value: "sk-secret" }] }),
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.name, "create-1");
    assert.equal(r.body.source, "internal_container");
    assert.equal(r.body.tenant_id, t.tenantA);
    assert.equal(r.body.status, "AWAITING_DATABASE");
    assert.ok(r.body.latest_revision_id);
    assert.equal(r.body.active_revision_id, null);
    assert.deepEqual(r.body.source_revision_config, { image_uri: "registry.example/agent:1" });
    assert.equal(r.body.secrets[0].name, "OPENAI_API_KEY");
    assert.ok(!JSON.stringify(r.body).includes("sk-secret"));
    const { rows } = await t.platform.sql.query<{ name: string }>(
      "SELECT name FROM platform_tracing_projects WHERE deployment_id = $1",
      [r.body.id],
    );
    assert.deepEqual(rows.map((x) => x.name), ["create-1"]);
    const again = await t.call("POST", "/v2/deployments", { body: container("create-1") });
    assert.equal(again.status, 409);
    const ready = await until(async () => {
      const g = await t.call("GET", `/v2/deployments/${r.body.id}`);
      return g.body.status === "READY" ? g : null;
    }, "READY");
    assert.equal(ready.status, 200);
  });

  test("name and source are immutable; repo_commit_sha is refused in requests", async () => {
    const c = await t.call("POST", "/v2/deployments", { body: container("immut-1") });
    for (const body of [{ name: "other" }, { source: "internal_source" }]) {
      const r = await t.call("PATCH", `/v2/deployments/${c.body.id}`, { body });
      assert.equal(r.status, 422);
      assert.equal(r.body.detail[0].type, "immutable");
      assert.deepEqual(r.body.detail[0].loc, ["body", Object.keys(body)[0]]);
    }
    const sha = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { source_revision_config: { image_uri: "a:2", repo_commit_sha: "abc" } },
    });
    assert.equal(sha.status, 422);
    assert.deepEqual(sha.body.detail[0].loc, ["body", "source_revision_config", "repo_commit_sha"]);
    const create = await t.call("POST", "/v2/deployments", {
      body: { ...container("immut-2"), source_revision_config: { image_uri: "a:1", repo_commit_sha: "abc" } },
    });
    assert.equal(create.status, 422);
  });

  test("delete answers 202 AWAITING_DELETE, then the deployment is gone", async () => {
    const c = await t.call("POST", "/v2/deployments", { body: container("delete-1") });
    const d = await t.call("DELETE", `/v2/deployments/${c.body.id}`);
    assert.equal(d.status, 202);
    assert.equal(d.body.status, "AWAITING_DELETE");
    await until(async () => (await t.call("GET", `/v2/deployments/${c.body.id}`)).status === 404, "deletion");
    assert.equal((await t.call("GET", `/v2/deployments/${c.body.id}/revisions`)).status, 404);
  });
});

describe("validation per source (cloud mode)", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["repohost needs integration_id", {
      source: "repohost",
      source_config: { repo_url: "file:///r.git" },
      source_revision_config: { repo_ref: "main" },
    }, "body.source_config.integration_id"],
    ["repohost integration must exist", {
      source: "repohost",
      source_config: { integration_id: "3f1e9d3c-1111-4222-8333-444455556666", repo_url: "file:///r.git" },
      source_revision_config: { repo_ref: "main" },
    }, "body.source_config.integration_id"],
    ["repohost needs repo_url", {
      source: "repohost",
      source_config: { integration_id: "INTEGRATION" },
      source_revision_config: { repo_ref: "main" },
    }, "body.source_config.repo_url"],
    ["repohost needs repo_ref", {
      source: "repohost",
      source_config: { integration_id: "INTEGRATION", repo_url: "file:///r.git" },
    }, "body.source_revision_config.repo_ref"],
    ["internal_container needs image_uri", { source: "internal_container" }, "body.source_revision_config.image_uri"],
    ["internal_source needs an upload", {
      source: "internal_source",
      source_revision_config: { source_tarball_path: "uploads/nope.bundle" },
    }, "body.source_revision_config.source_tarball_path"],
    ["internal_template needs a template", { source: "internal_template" }, "body.source_config.template"],
    [
      "internal_template needs a known template",
      { source: "internal_template", source_config: { template: "nope" } },
      "body.source_config.template",
    ],
    ["external_container is self-hosted only", {
      source: "external_container",
      source_revision_config: { image_uri: "a:1" },
    }, "body.source"],
    ["secret_references only for external_container", {
      source: "internal_container",
      source_revision_config: { image_uri: "a:1" },
      secret_references: [{ name: "A", secret_name: "s", secret_key: "k" }],
    }, "body.secret_references"],
    ["a field of another source is refused", {
      source: "internal_container",
      source_revision_config: { image_uri: "a:1", repo_ref: "main" },
    }, "body.source_revision_config.repo_ref"],
    ["listener_id must exist", {
      source: "internal_container",
      source_config: { listener_id: "3f1e9d3c-1111-4222-8333-444455556666" },
      source_revision_config: { image_uri: "a:1" },
    }, "body.source_config.listener_id"],
    ["resource_spec: min_scale above max_scale", {
      source: "internal_container",
      source_config: { resource_spec: { min_scale: 3, max_scale: 1 } },
      source_revision_config: { image_uri: "a:1" },
    }, "body.source_config.resource_spec.max_scale"],
    ["resource_spec: mount of an unknown volume", {
      source: "internal_container",
      source_config: { resource_spec: { volume_mounts: [{ name: "v", mountPath: "/v" }] } },
      source_revision_config: { image_uri: "a:1" },
    }, "body.source_config.resource_spec.volume_mounts.0.name"],
    ["resource_spec: a volume without a kind", {
      source: "internal_container",
      source_config: { resource_spec: { volumes: [{ name: "v" }] } },
      source_revision_config: { image_uri: "a:1" },
    }, "body.source_config.resource_spec.volumes.0"],
    ["resource_spec: container without image", {
      source: "internal_container",
      source_config: { resource_spec: { sidecars: [{ name: "s" }] } },
      source_revision_config: { image_uri: "a:1" },
    }, "body.source_config.resource_spec.sidecars.0.image"],
    ["resource_spec: negative cpu", {
      source: "internal_container",
      source_config: { resource_spec: { cpu: -1 } },
      source_revision_config: { image_uri: "a:1" },
    }, "body.source_config.resource_spec.cpu"],
    ["deployment_type enum", {
      source: "internal_container",
      source_config: { deployment_type: "huge" },
      source_revision_config: { image_uri: "a:1" },
    }, "body.source_config.deployment_type"],
  ];
  let integrationId = "";
  before(async () => {
    integrationId = (await createIntegration(t.platform.sql, {
      tenantId: t.tenantA,
      kind: "repohost",
      apiUrl: "http://127.0.0.1:1",
      token: "x",
    })).id;
  });
  for (const [label, body, loc] of cases) {
    test(label, async () => {
      const filled = JSON.parse(JSON.stringify(body).replace("INTEGRATION", integrationId));
      const r = await t.call("POST", "/v2/deployments", {
        body: { name: `v-${Math.random().toString(36).slice(2, 8)}`, ...filled },
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      const locs = r.body.detail.map((d: { loc: Array<string | number> }) => d.loc.join("."));
      assert.ok(locs.includes(loc), `${loc} not in ${locs.join(", ")}`);
    });
  }

  test("a valid repohost body passes validation", async () => {
    const r = await t.call("POST", "/v2/deployments", {
      body: {
        name: "repo-ok",
        source: "repohost",
        source_config: { integration_id: integrationId, repo_url: "file:///nonexistent.git" },
        source_revision_config: { repo_ref: "main" },
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const rev = await until(async () => {
      const x = await t.call("GET", `/v2/deployments/${r.body.id}/revisions/${r.body.latest_revision_id}`);
      return x.body.status === "CREATE_FAILED" ? x : null;
    }, "CREATE_FAILED");
    assert.match(rev.body.status_message, /git|ref/);
  });

  test("internal_source may be created before its first upload, with no revision", async () => {
    const r = await t.call("POST", "/v2/deployments", { body: { name: "src-empty", source: "internal_source" } });
    assert.equal(r.status, 201);
    assert.equal(r.body.latest_revision_id, null);
    const p = await t.call("PATCH", `/v2/deployments/${r.body.id}`, {
      body: { source_revision_config: { graph_config_path: "agent.toml" } },
    });
    assert.equal(p.status, 422);
    assert.deepEqual(p.body.detail[0].loc, ["body", "source_revision_config", "source_tarball_path"]);
  });
});

describe("revisions", () => {
  test("source_config-only patches make no revision; revision config or secret changes do", async () => {
    const c = await t.call("POST", "/v2/deployments", {
      body: container("rev-1", { secrets: [{ name: "A", value: "1" }] }),
    });
    const first = c.body.latest_revision_id;
    const p1 = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { source_config: { custom_url: "https://agent.example", deployment_type: "prod" } },
    });
    assert.equal(p1.status, 200);
    assert.equal(p1.body.latest_revision_id, first);
    assert.equal(p1.body.source_config.custom_url, "https://agent.example");
    const same = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { secrets: [{ name: "A", value: "1" }] },
    });
    assert.equal(same.body.latest_revision_id, first);
    const p2 = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { source_revision_config: { image_uri: "registry.example/agent:2" } },
    });
    assert.notEqual(p2.body.latest_revision_id, first);
    assert.equal(p2.body.source_revision_config.image_uri, "registry.example/agent:2");
    const p3 = await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
      body: { secrets: [{ name: "A", value: "2" }] },
    });
    assert.notEqual(p3.body.latest_revision_id, p2.body.latest_revision_id);
    const list = await t.call("GET", `/v2/deployments/${c.body.id}/revisions`);
    assert.equal(list.body.resources.length, 3);
    assert.deepEqual(list.body.resources.map((r: { id: string }) => r.id), [
      p3.body.latest_revision_id,
      p2.body.latest_revision_id,
      first,
    ]);
    const one = await t.call("GET", `/v2/deployments/${c.body.id}/revisions/${first}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.source, "internal_container");
    assert.deepEqual(one.body.source_revision_config, { image_uri: "registry.example/agent:1" });
    assert.equal(
      (await t.call("GET", `/v2/deployments/${c.body.id}/revisions/3f1e9d3c-1111-4222-8333-444455556666`)).status,
      404,
    );
  });

  test("revision list pages newest first and filters by status", async () => {
    const c = await t.call("POST", "/v2/deployments", { body: container("rev-page") });
    for (let i = 2; i <= 5; i++) {
      await t.call("PATCH", `/v2/deployments/${c.body.id}`, {
        body: { source_revision_config: { image_uri: `a:${i}` } },
      });
    }
    const all = await until(async () => {
      const x = await t.call("GET", `/v2/deployments/${c.body.id}/revisions?limit=100`);
      return x.body.resources.every((r: { status: string }) => ["DEPLOY_FAILED", "SKIPPED"].includes(r.status))
        ? x
        : null;
    }, "revisions settled");
    assert.equal(all.body.resources.length, 5);
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const page = await t.call("GET", `/v2/deployments/${c.body.id}/revisions?limit=2&offset=${offset}`);
      assert.ok(page.body.resources.length <= 2);
      if (!page.body.resources.length) break;
      seen.push(...page.body.resources.map((r: { id: string }) => r.id));
      offset = page.body.offset;
    }
    assert.deepEqual(seen, all.body.resources.map((r: { id: string }) => r.id));
    const failed = await t.call("GET", `/v2/deployments/${c.body.id}/revisions?status=DEPLOY_FAILED`);
    const skipped = await t.call("GET", `/v2/deployments/${c.body.id}/revisions?status=SKIPPED,DEPLOYED`);
    assert.equal(failed.body.resources.length + skipped.body.resources.length, 5);
    assert.ok(failed.body.resources.every((r: { status: string }) => r.status === "DEPLOY_FAILED"));
    assert.ok(skipped.body.resources.every((r: { status: string }) => r.status === "SKIPPED"));
    assert.equal((await t.call("GET", `/v2/deployments/${c.body.id}/revisions?status=NOPE`)).status, 422);
    assert.equal(
      (await t.call("GET", `/v2/deployments/${c.body.id}/revisions?remote_reconciled=false`)).body.resources.length,
      5,
    );
    assert.equal(
      (await t.call("GET", `/v2/deployments/${c.body.id}/revisions?remote_reconciled=true`)).body.resources.length,
      0,
    );
    assert.equal((await t.call("GET", `/v2/deployments/${c.body.id}/revisions?limit=0`)).status, 422);
  });

  test("a failed deploy keeps its reason and logs", async () => {
    const c = await t.call("POST", "/v2/deployments", { body: container("rev-fail") });
    const r = await until(async () => {
      const x = await t.call("GET", `/v2/deployments/${c.body.id}/revisions/${c.body.latest_revision_id}`);
      return x.body.status === "DEPLOY_FAILED" ? x : null;
    }, "DEPLOY_FAILED");
    assert.match(r.body.status_message, /k8s listener/);
    const logs = await t.call("GET", `/v2/deployments/${c.body.id}/revisions/${c.body.latest_revision_id}/logs`);
    assert.ok(logs.body.logs.some((l: { message: string }) => l.message.includes("DEPLOY_FAILED")));
    const deployOnly = await t.call(
      "GET",
      `/v2/deployments/${c.body.id}/revisions/${c.body.latest_revision_id}/logs?kind=deploy`,
    );
    assert.ok(deployOnly.body.logs.every((l: { kind: string }) => l.kind === "deploy"));
    const rest = await t.call(
      "GET",
      `/v2/deployments/${c.body.id}/revisions/${c.body.latest_revision_id}/logs?after=${logs.body.after}`,
    );
    assert.deepEqual(rest.body.logs, []);
  });
});

describe("tokens", () => {
  test("only the owner may patch metadata; one default per provider", async () => {
    const t1 = await createToken(t.platform.sql, {
      tenantId: t.tenantA,
      ownerUserId: "alice",
      providerId: "repohost",
      label: "first",
      isDefault: true,
    });
    const t2 = await createToken(t.platform.sql, {
      tenantId: t.tenantA,
      ownerUserId: "alice",
      providerId: "repohost",
      label: "second",
    });
    const r = await t.call("PATCH", `/v2/auth/tokens/${t2.id}/metadata`, {
      body: { provider_account_label: "renamed", is_default: true },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.provider_account_label, "renamed");
    assert.equal(r.body.is_default, true);
    for (const k of ["id", "provider_id", "created_at", "updated_at", "expires_at", "scopes"]) {
      assert.ok(k in r.body, k);
    }
    const mine = await t.call("GET", "/v2/auth/tokens");
    assert.deepEqual(mine.body.filter((x: { is_default: boolean }) => x.is_default).map((x: { id: string }) => x.id), [
      t2.id,
    ]);
    const bob = await t.call("PATCH", `/v2/auth/tokens/${t1.id}/metadata`, {
      key: t.keyA2,
      body: { provider_account_label: "mine now" },
    });
    assert.equal(bob.status, 403);
    const other = await t.call("PATCH", `/v2/auth/tokens/${t1.id}/metadata`, {
      key: t.keyB,
      body: { provider_account_label: "x" },
    });
    assert.equal(other.status, 404);
    const unchanged = await t.call("GET", "/v2/auth/tokens");
    assert.equal(unchanged.body.find((x: { id: string }) => x.id === t1.id).provider_account_label, "first");
    assert.equal(
      (await t.call("PATCH", `/v2/auth/tokens/${t1.id}/metadata`, { body: { is_default: "yes" } })).status,
      422,
    );
  });
});

describe("listeners", () => {
  test("create, read, patch version and compute_config; compute_type and compute_id never change", async () => {
    const c = await t.call("POST", "/v2/listeners", {
      body: {
        compute_type: "k8s",
        compute_id: "cluster-1",
        compute_config: { k8s_namespaces: ["agents"] },
        version: "1",
      },
    });
    assert.equal(c.status, 201);
    assert.equal(c.body.compute_type, "k8s");
    const p = await t.call("PATCH", `/v2/listeners/${c.body.id}`, {
      body: { version: "2", compute_config: { k8s_namespaces: ["agents", "more"] } },
    });
    assert.equal(p.status, 200);
    assert.equal(p.body.version, "2");
    assert.deepEqual(p.body.compute_config, { k8s_namespaces: ["agents", "more"] });
    for (const body of [{ compute_type: "local" }, { compute_id: "cluster-2" }]) {
      const r = await t.call("PATCH", `/v2/listeners/${c.body.id}`, { body });
      assert.equal(r.status, 422);
      assert.equal(r.body.detail[0].type, "immutable");
    }
    const bad = await t.call("PATCH", `/v2/listeners/${c.body.id}`, {
      body: { compute_config: { k8s_namespaces: "agents" } },
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ["body", "compute_config", "k8s_namespaces"]);
    const g = await t.call("GET", `/v2/listeners/${c.body.id}`);
    assert.equal(g.body.compute_id, "cluster-1");
    assert.equal((await t.call("GET", `/v2/listeners/${c.body.id}`, { key: t.keyB })).status, 404);
    assert.equal(
      (await t.call("PATCH", `/v2/listeners/${c.body.id}`, { key: t.keyB, body: { version: "3" } })).status,
      404,
    );
    assert.equal(
      (await t.call("POST", "/v2/listeners", { body: { compute_type: "k8s", compute_id: "cluster-1" } })).status,
      409,
    );
    const ns = await t.call("POST", "/v2/deployments", {
      body: container("ns-check", {
        source_config: { listener_id: c.body.id, listener_config: { k8s_namespace: "elsewhere" } },
      }),
    });
    assert.equal(ns.status, 422);
    assert.deepEqual(ns.body.detail[0].loc, ["body", "source_config", "listener_config", "k8s_namespace"]);
    const list = await t.call("GET", "/v2/listeners");
    assert.ok(list.body.resources.some((l: { id: string }) => l.id === c.body.id));
    assert.ok(
      !(await t.call("GET", "/v2/listeners", { key: t.keyB })).body.resources.some((l: { id: string }) =>
        l.id === c.body.id
      ),
    );
  });

  test("patch rules: compute_config is validated by compute_type, unknown members are refused, omitted fields are kept", async () => {
    const local = await t.call("POST", "/v2/listeners", {
      body: { compute_type: "local", compute_id: "laptop-1", version: "1" },
    });
    assert.equal(local.status, 201);
    const withK8sConfig = await t.call("POST", "/v2/listeners", {
      body: { compute_type: "local", compute_id: "laptop-2", compute_config: { k8s_namespaces: ["a"] } },
    });
    assert.equal(withK8sConfig.status, 422);
    assert.deepEqual(withK8sConfig.body.detail[0].loc, ["body", "compute_config"]);
    const bad = await t.call("PATCH", `/v2/listeners/${local.body.id}`, {
      body: { compute_config: { k8s_namespaces: ["a"] } },
    });
    assert.equal(bad.status, 422);
    const unknown = await t.call("PATCH", `/v2/listeners/${local.body.id}`, { body: { version: "2", colour: "red" } });
    assert.equal(unknown.status, 422);
    assert.equal(
      (await t.call("GET", `/v2/listeners/${local.body.id}`)).body.version,
      "1",
      "a refused patch changes nothing",
    );
    const k8s = await t.call("POST", "/v2/listeners", {
      body: {
        compute_type: "k8s",
        compute_id: "cluster-keep",
        compute_config: { k8s_namespaces: ["x"] },
        version: "1",
      },
    });
    const onlyVersion = await t.call("PATCH", `/v2/listeners/${k8s.body.id}`, { body: { version: "1.1" } });
    assert.equal(onlyVersion.status, 200);
    assert.deepEqual(onlyVersion.body.compute_config, { k8s_namespaces: ["x"] });
    const onlyConfig = await t.call("PATCH", `/v2/listeners/${k8s.body.id}`, {
      body: { compute_config: { k8s_namespaces: ["y"] } },
    });
    assert.equal(onlyConfig.body.version, "1.1");
    assert.deepEqual(onlyConfig.body.compute_config, { k8s_namespaces: ["y"] });
    assert.equal((await t.call("PATCH", `/v2/listeners/${k8s.body.id}`, { body: { version: "" } })).status, 422);
    assert.equal(
      (await t.call("PATCH", "/v2/listeners/3f1e9d3c-1111-4222-8333-444455556666", { body: { version: "1" } })).status,
      404,
    );
  });
});

describe("tenant isolation", () => {
  test("another tenant sees none of the deployments, revisions or uploads", async () => {
    const c = await t.call("POST", "/v2/deployments", { body: container("iso-1") });
    const b = { key: t.keyB };
    assert.equal((await t.call("GET", "/v2/deployments?name_contains=iso-1", b)).body.resources.length, 0);
    assert.equal((await t.call("GET", `/v2/deployments/${c.body.id}`, b)).status, 404);
    assert.equal(
      (await t.call("PATCH", `/v2/deployments/${c.body.id}`, { ...b, body: { source_config: { custom_url: "x" } } }))
        .status,
      404,
    );
    assert.equal((await t.call("DELETE", `/v2/deployments/${c.body.id}`, b)).status, 404);
    assert.equal((await t.call("GET", `/v2/deployments/${c.body.id}/revisions`, b)).status, 404);
    assert.equal(
      (await t.call("GET", `/v2/deployments/${c.body.id}/revisions/${c.body.latest_revision_id}`, b)).status,
      404,
    );
    assert.equal((await t.call("POST", `/v2/deployments/${c.body.id}/upload-url`, b)).status, 404);
    const same = await t.call("POST", "/v2/deployments", { ...b, body: container("iso-1") });
    assert.equal(same.status, 201, "names are per tenant");
    const up = await t.call("POST", `/v2/deployments/${c.body.id}/upload-url`);
    const theirs = await t.call("PATCH", `/v2/deployments/${same.body.id}`, {
      ...b,
      body: { source_revision_config: { image_uri: "b:1" } },
    });
    assert.equal(theirs.status, 200);
    const src = await t.call("POST", "/v2/deployments", {
      ...b,
      body: {
        name: "iso-src",
        source: "internal_source",
        source_revision_config: { source_tarball_path: up.body.object_path },
      },
    });
    assert.equal(src.status, 422, "B cannot use A's upload");
    const rev = `/v2/deployments/${c.body.id}/revisions/${c.body.latest_revision_id}`;
    assert.equal((await t.call("GET", `${rev}/logs`, b)).status, 404);
    assert.equal((await t.call("POST", `${rev}/redeploy`, b)).status, 404);
    assert.equal((await t.call("GET", `${rev}/bundle`, b)).status, 404);
    assert.deepEqual((await t.call("GET", `/v2/deployments?deployment_ids=${c.body.id}`, b)).body.resources, []);
    assert.equal((await t.call("GET", `/v2/deployments?deployment_ids=${c.body.id}`)).body.resources.length, 1);
    const mine = (await t.call("GET", "/v2/deployments?limit=100", b)).body.resources;
    assert.ok(mine.every((d: { tenant_id: string }) => d.tenant_id === t.tenantB));
  });

  test("tokens of another tenant are neither listed nor reachable", async () => {
    const theirs = await createToken(t.platform.sql, {
      tenantId: t.tenantB,
      ownerUserId: "carol",
      providerId: "repohost",
      label: "carol's",
    });
    assert.ok(!(await t.call("GET", "/v2/auth/tokens")).body.some((x: { id: string }) => x.id === theirs.id));
    assert.deepEqual((await t.call("GET", "/v2/auth/tokens", { key: t.keyB })).body.map((x: { id: string }) => x.id), [
      theirs.id,
    ]);
    assert.equal(
      (await t.call("PATCH", `/v2/auth/tokens/${theirs.id}/metadata`, { body: { is_default: true } })).status,
      404,
    );
    const ok = await t.call("PATCH", `/v2/auth/tokens/${theirs.id}/metadata`, {
      key: t.keyB,
      body: { is_default: true },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.is_default, true);
  });
});
