/**
 * The control plane's computes are plugins of kind `compute`: chosen by the listener type
 * (`compute.type`; no listener: `local`), asked once for their driver with a `ComputeContext`,
 * closed with the control plane; a listener may name the type of any loaded compute plugin (a
 * third-party one too: a file plugin of type "fake"). The built-in drivers themselves are exercised by local.test.ts and
 * k8s.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ComputeContext,
  type ComputeDriver,
  definePlugin,
  loadPlugins,
  PluginDriver,
  selfInvocation,
} from "../../core/kernel/index.ts";
import type { AgentcliError } from "../../core/kernel/index.ts";
import { openComputes } from "../../core/platform/compute/computes.ts";
import type { SqlExecutor } from "../../core/storage/index.ts";

/** A store no test here reaches (the canary threads' calls would). */
const noSql: SqlExecutor = { query: () => Promise.reject(new Error("no store in this test")) };
import { builtinPlugins } from "../../plugins/registry.ts";
import { startTestPlatform, until } from "./_harness.ts";

test("the built-in computes: compute-local runs type local, compute-k8s type k8s", async () => {
  const driver = await loadPlugins(builtinPlugins);
  assert.equal(driver.provider("compute", "local")?.name, "compute-local");
  assert.equal(driver.provider("compute", "k8s")?.name, "compute-k8s");
  assert.deepEqual(driver.specs("compute").map((s) => s.type), ["local", "k8s"]);
  await assert.rejects(
    loadPlugins([
      ...builtinPlugins,
      definePlugin({ name: "compute-other", kind: "compute", compute: { type: "local" } }),
    ]),
    (e: AgentcliError) => {
      assert.match(e.diagnostics.map((d) => d.message).join("\n"), /already provides/);
      return true;
    },
  );
});

test("each compute plugin is asked once for its driver, with the control plane's context; a listener chooses by type", async () => {
  const asked: ComputeContext[] = [];
  const closed: string[] = [];
  const fake = (type: string): ComputeDriver => ({
    kind: type,
    provision: async () => {},
    rollout: async () => ({ url: null }),
    teardown: async () => {},
    close: async () => void closed.push(type),
  });
  const plugin = (type: string) =>
    definePlugin({
      name: `compute-${type}`,
      kind: "compute",
      compute: { type },
      hooks: { "compute:driver": (ctx) => (asked.push(ctx), fake(type)) },
    });
  const computes = await openComputes({
    driver: new PluginDriver([plugin("local"), plugin("k8s")]),
    dataDir: "/var/lib/cp",
    host: "127.0.0.2",
    databaseUrl: null,
    bundleAccess: (d, r) => ({ url: `http://cp/${d}/${r}`, token: "t" }),
    sql: noSql,
  });
  assert.deepEqual(asked.map((c) => c.type), ["local", "k8s"]);
  const [ctx] = asked;
  assert.equal(ctx!.dataDir, join("/var/lib/cp", "deployments"));
  assert.equal(ctx!.host, "127.0.0.2");
  assert.equal(ctx!.database, null);
  assert.deepEqual(ctx!.command, selfInvocation());
  assert.equal(ctx!.maxConnectionsPerClient, 128);
  assert.deepEqual(ctx!.bundleAccess("d1", "r1"), { url: "http://cp/d1/r1", token: "t" });
  assert.equal(computes.for(null).kind, "local");
  assert.equal(computes.for({ compute_type: "k8s" }).kind, "k8s");
  assert.equal(computes.get("local")?.kind, "local");
  assert.throws(() => computes.for({ compute_type: "nomad" }), /no compute plugin runs listener type "nomad"/);
  await computes.close();
  assert.deepEqual(closed, ["k8s", "local"]);
});

test("the database a compute gets takes plain schema names only", async () => {
  let ctx: ComputeContext | null = null;
  await openComputes({
    driver: new PluginDriver([
      definePlugin({
        name: "compute-local",
        kind: "compute",
        compute: { type: "local" },
        hooks: { "compute:driver": (c) => void (ctx = c) },
      }),
    ]),
    dataDir: "/tmp/cp",
    host: "127.0.0.1",
    databaseUrl: "postgres://nobody@127.0.0.1:1/none",
    bundleAccess: () => null,
    sql: noSql,
  });
  const c = ctx as ComputeContext | null;
  assert.equal(c?.database?.url, "postgres://nobody@127.0.0.1:1/none");
  await assert.rejects(c!.database!.createSchema("x; DROP TABLE y"), /not a plain lower-case name/);
});

/** A third-party compute plugin file: type "fake"; each rollout serves a tiny HTTP server and is recorded. */
const FAKE_COMPUTE = `import { createServer } from "node:http";
const servers = new Map();
globalThis.fakeComputeRollouts = [];
export default {
  name: "compute-fake",
  kind: "compute",
  compute: { type: "fake" },
  hooks: {
    "compute:driver": (ctx) => ({
      kind: ctx.type,
      async provision() {},
      async rollout(req) {
        globalThis.fakeComputeRollouts.push({ deployment: req.deployment.id, revision: req.revision.id, listener: req.listener?.id, image: req.imageUri });
        req.log("deploy", "fake compute: serving " + req.revision.id);
        servers.get(req.deployment.id)?.close();
        const server = createServer((_q, res) => res.end("fake " + req.revision.id));
        await new Promise((r) => server.listen(0, "127.0.0.1", r));
        servers.set(req.deployment.id, server);
        return { url: "http://127.0.0.1:" + server.address().port };
      },
      async teardown(deployment) {
        servers.get(deployment.id)?.close();
        servers.delete(deployment.id);
      },
      async close() {
        for (const s of servers.values()) s.close();
      },
    }),
  },
};
`;

test("a listener names a third-party compute plugin's type, and its deployments roll out through that plugin", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agentcli-compute-fake-"));
  await writeFile(join(dir, "compute-fake.mjs"), FAKE_COMPUTE);
  const t = await startTestPlatform({
    driver: await loadPlugins(builtinPlugins, { paths: ["compute-fake.mjs"], cwd: dir }),
  });
  try {
    assert.deepEqual(t.platform.computes.types, ["local", "k8s", "fake"]);
    const unknown = await t.call("POST", "/v2/listeners", { body: { compute_type: "nomad", compute_id: "n1" } });
    assert.equal(unknown.status, 422, JSON.stringify(unknown.body));
    assert.deepEqual(unknown.body.detail[0].loc, ["body", "compute_type"]);
    assert.match(
      unknown.body.detail[0].msg,
      /compute_type "nomad" is not run by this control plane .*"local", "k8s", "fake"/,
    );

    const listener = await t.call("POST", "/v2/listeners", { body: { compute_type: "fake", compute_id: "fake-1" } });
    assert.equal(listener.status, 201, JSON.stringify(listener.body));
    assert.equal(listener.body.compute_type, "fake");
    const d = await t.call("POST", "/v2/deployments", {
      body: {
        name: "on-fake",
        source: "internal_container",
        source_config: { listener_id: listener.body.id },
        source_revision_config: { image_uri: "registry.example/agent:1" },
      },
    });
    assert.equal(d.status, 201, JSON.stringify(d.body));
    const revision = await until(async () => {
      const r = await t.call("GET", `/v2/deployments/${d.body.id}/revisions/${d.body.latest_revision_id}`);
      return ["DEPLOYED", "DEPLOY_FAILED"].includes(r.body.status) ? r.body : null;
    }, "the revision on the fake compute settles");
    assert.equal(revision.status, "DEPLOYED", JSON.stringify(revision));
    const rollouts = (globalThis as { fakeComputeRollouts?: unknown[] }).fakeComputeRollouts;
    assert.deepEqual(rollouts, [{
      deployment: d.body.id,
      revision: d.body.latest_revision_id,
      listener: listener.body.id,
      image: "registry.example/agent:1",
    }]);
    const deployment = (await t.call("GET", `/v2/deployments/${d.body.id}`)).body;
    assert.equal(await (await fetch(deployment.url)).text(), `fake ${d.body.latest_revision_id}`);
  } finally {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  }
});
