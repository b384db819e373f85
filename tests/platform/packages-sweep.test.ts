/**
 * The control plane removes installs of a LangGraph.js project's npm packages that no revision
 * it may still run or roll back to uses, once unused for the grace period
 * (`AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS`). Real control plane, real revisions whose builds run
 * `npm ci` (a lockfile of `ms` alone), a recording compute: a fresh unused install is kept, an
 * old one is removed (one line with its size), the serving revision's is kept, a rollback to a
 * revision whose install was removed installs it again; with a grace period of 0 an unused
 * install goes at once while an install in progress and the live revision's stay, and a
 * revision built before keys were recorded gets its key from its bundle. "Old" is a folder's
 * modification time set back: no waits.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, statSync, utimesSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { packagesSweepSettings, sweepPackages } from "../../core/platform/reconciler/packages-sweep.ts";
import {
  bundleOfFiles,
  deployBundle,
  RecordingCompute,
  revisionSettled,
  startTestPlatform,
  type TestPlatform,
} from "./_harness.ts";

const MS_LOCK = {
  name: "sweep-example",
  lockfileVersion: 3,
  requires: true,
  packages: {
    "": { name: "sweep-example", dependencies: { ms: "2.1.3" } },
    "node_modules/ms": {
      version: "2.1.3",
      integrity: "sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA==",
      license: "MIT",
    },
  },
};

/** A LangGraph.js project needing `ms` (not lent); `variant` changes package.json, so its install is another one. */
async function projectBundle(variant: string): Promise<Uint8Array> {
  return await bundleOfFiles({
    "langgraph.json": JSON.stringify({ node_version: "22", dependencies: ["."], graphs: { g: "./src/g.ts:graph" } }),
    "package.json": JSON.stringify({ name: "sweep-example", description: variant, dependencies: { ms: "2.1.3" } }),
    "package-lock.json": JSON.stringify(MS_LOCK),
    "src/g.ts": "export const graph = null;\n",
  });
}

const compute = new RecordingCompute();
const lines: string[] = [];
let t: TestPlatform;
let deploymentId = "";

before(async () => {
  t = await startTestPlatform({
    computeFor: () => compute,
    env: { AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS: "1", AGENTCLI_PLATFORM_PACKAGES_KEEP_REVISIONS: "1" },
    reconcile: { packagesSweepMs: 0 },
    log: (line) => lines.push(line),
  });
  const d = await t.call("POST", "/v2/deployments", { body: { name: "sweep", source: "internal_source" } });
  assert.equal(d.status, 201, JSON.stringify(d.body));
  deploymentId = d.body.id;
});
after(async () => await t?.close());

/** Deploys `bundle` as the next revision and waits for DEPLOYED; its id and the packages folder its rollout got. */
async function deploy(bundle: Uint8Array): Promise<{ revision: string; packages: string }> {
  const revision = await deployBundle(t.platform.app, t.keyA, deploymentId, bundle, { secrets: [] });
  return await deployed(revision);
}

async function deployed(revision: string): Promise<{ revision: string; packages: string }> {
  const r = await revisionSettled(t.platform.app, t.keyA, deploymentId, revision);
  assert.equal(r.status, "DEPLOYED", JSON.stringify(r));
  const packages = compute.rollouts.at(-1)!.packages!;
  assert.ok(packages && existsSync(join(packages, "node_modules/ms/package.json")), packages);
  return { revision, packages };
}

/**
 * Makes the entries of `dir` impossible to move or remove (a read-only folder; for root, which
 * writes there anyway, the immutable attribute) or possible again.
 */
function lockFolder(dir: string, locked: boolean): void {
  if (process.getuid?.() === 0) {
    const r = spawnSync("chattr", [locked ? "+i" : "-i", dir]);
    assert.equal(r.status, 0, `chattr: ${r.stderr}`);
  } else chmodSync(dir, locked ? 0o555 : 0o755);
}

/** Sets a folder's last use two days back. */
function age(dir: string): void {
  const then = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
  utimesSync(dir, then, then);
}

describe("the sweep of unused npm package installs", () => {
  let v1 = { revision: "", packages: "" };
  let v2 = { revision: "", packages: "" };

  test("an unused install within the grace period is kept; once older, it is removed and the live one kept", async () => {
    v1 = await deploy(await projectBundle("a"));
    v2 = await deploy(await projectBundle("b"));
    assert.notEqual(v1.packages, v2.packages);
    const sweep = () => t.platform.services.reconciler.sweepPackages();
    // v1 served (a rollback may return to it) but only the newest served revision keeps its install (KEEP_REVISIONS=1).
    assert.deepEqual(await sweep(), []);
    assert.ok(existsSync(v1.packages) && existsSync(v2.packages));
    age(v1.packages);
    age(v2.packages);
    assert.deepEqual(await sweep(), [basename(v1.packages)]);
    assert.ok(!existsSync(v1.packages), "the unused old install is removed");
    assert.ok(existsSync(join(v2.packages, "node_modules/ms")), "the serving revision's install is kept");
    assert.ok(Date.now() - statSync(v2.packages).mtimeMs < 60_000, "its use time is stamped by the sweep");
    const removed = lines.filter((l) => l.startsWith("removed the npm packages"));
    assert.equal(removed.length, 1, lines.join("\n"));
    assert.match(
      removed[0]!,
      new RegExp(`^removed the npm packages ${basename(v1.packages).slice(0, 12)} \\(\\d+\\.\\d MiB\\)`),
    );
  });

  test("a rollback to a revision whose install was removed installs it again", async () => {
    assert.ok(v1.revision, "the first test deployed");
    const rolled = await t.call("POST", `/v2/deployments/${deploymentId}/rollback`, {
      body: { revision_id: v1.revision },
    });
    assert.equal(rolled.status, 201, JSON.stringify(rolled.body));
    const back = await deployed(rolled.body.id);
    assert.equal(back.packages, v1.packages);
    const logs = await t.call("GET", `/v2/deployments/${deploymentId}/revisions/${back.revision}/logs?kind=build`);
    const text = (logs.body.logs as Array<{ message: string }>).map((l) => l.message).join("\n");
    assert.match(text, /installing the npm packages of the project: npm ci/);
  });

  test("grace period 0: an unused install goes at once; the live one, an install in progress and a legacy revision's stay", async () => {
    assert.ok(v1.revision, "the first test deployed");
    const settings = packagesSweepSettings({
      AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS: "0",
      AGENTCLI_PLATFORM_PACKAGES_KEEP_REVISIONS: "1",
    });
    assert.equal(settings.keepMs, 0);
    const dir = dirname(v1.packages);
    const inProgress = join(dir, `.${"0".repeat(32)}.1a2b3c4d`);
    mkdirSync(join(inProgress, "node_modules"), { recursive: true });
    // The serving rollback, as if built before keys were recorded: its key comes from its bundle.
    await t.platform.sql.query("UPDATE platform_revisions SET packages_key = NULL WHERE deployment_id = $1", [
      deploymentId,
    ]);
    const sweep = {
      db: t.platform.sql,
      dir,
      settings,
      log: (l: string) => lines.push(l),
      onError: (e: unknown) => {
        throw e;
      },
    };
    assert.deepEqual(await sweepPackages(sweep), [basename(v2.packages)]);
    assert.ok(!existsSync(v2.packages), "v2 no longer serves and is not the newest that served");
    assert.ok(existsSync(join(v1.packages, "node_modules/ms")), "the serving revision's install stays");
    assert.ok(existsSync(inProgress), "an install in progress stays");
    const { rows } = await t.platform.sql.query<{ packages_key: string | null }>(
      "SELECT packages_key FROM platform_revisions WHERE id = $1",
      [(await t.call("GET", `/v2/deployments/${deploymentId}`)).body.active_revision_id],
    );
    assert.equal(rows[0]!.packages_key, basename(v1.packages));
  });

  test("a removal that fails is logged and tried again by the next sweep; rollouts go on", async () => {
    assert.ok(v1.revision, "the first test deployed");
    const dir = dirname(v1.packages);
    const stale = join(dir, "f".repeat(32));
    mkdirSync(join(stale, "node_modules"), { recursive: true });
    age(stale);
    const errors: string[] = [];
    const sweep = {
      db: t.platform.sql,
      dir,
      settings: packagesSweepSettings({ AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS: "1" }),
      log: (l: string) => lines.push(l),
      onError: (e: unknown) => errors.push((e as Error).message),
    };
    lockFolder(dir, true);
    try {
      assert.deepEqual(await sweepPackages(sweep), []);
      // A rollout meanwhile reuses its install (the folder it names is kept).
      const again = await deploy(await projectBundle("a"));
      assert.equal(again.packages, v1.packages);
    } finally {
      lockFolder(dir, false);
    }
    assert.equal(errors.length, 1, errors.join("\n"));
    assert.match(errors[0]!, /^Cannot remove the npm packages "f{32}": .*\(the next sweep tries again\)$/);
    assert.ok(existsSync(stale));
    assert.deepEqual(await sweepPackages(sweep), [basename(stale)]);
    assert.ok(!existsSync(stale) && existsSync(v1.packages));
  });

  test("a setting that is not a number of 0 or more is refused naming it", () => {
    assert.throws(
      () => packagesSweepSettings({ AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS: "-1" }),
      /AGENTCLI_PLATFORM_PACKAGES_KEEP_DAYS/,
    );
    assert.throws(
      () => packagesSweepSettings({ AGENTCLI_PLATFORM_PACKAGES_KEEP_REVISIONS: "1.5" }),
      /AGENTCLI_PLATFORM_PACKAGES_KEEP_REVISIONS/,
    );
  });
});
