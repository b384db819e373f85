/**
 * The control plane's computes are plugins of kind `compute`: chosen by the listener type
 * (`compute.type`; no listener: `local`), asked once for their driver with a `ComputeContext`,
 * closed with the control plane. The drivers themselves are exercised by local.test.ts and
 * k8s.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
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
import { builtinPlugins } from "../../plugins/registry.ts";

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
  });
  const c = ctx as ComputeContext | null;
  assert.equal(c?.database?.url, "postgres://nobody@127.0.0.1:1/none");
  await assert.rejects(c!.database!.createSchema("x; DROP TABLE y"), /not a plain lower-case name/);
});
