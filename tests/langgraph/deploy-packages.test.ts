/**
 * A LangGraph.js project whose graph imports an npm package agentcli does not lend (`ms`),
 * deployed to the local control plane through the real processes: the revision's build
 * installs the project's `dependencies` with `npm ci` (its package-lock.json) outside the
 * bundle, which stays free of node_modules; the graph runs under LangGraph's SDK with the
 * project's own @langchain/langgraph; the same lockfile deployed again reuses the install. An
 * install that fails (a package the registry does not have, a lockfile out of step with
 * package.json) ends the revision BUILD_FAILED with npm's reason, no path of the control
 * plane's machine in it, and the previous revision keeps serving. examples/langgraph-js with
 * such a package runs on its own installed @langchain/*, SDK and hono. `node_version` below 22 is
 * refused naming the key; the k8s compute refuses a revision with installed packages; `dev`
 * before `npm install` names the missing package and says the install is the user's.
 *
 * A project with a pnpm-lock.yaml or a yarn.lock (v1) gets the version its lockfile pins (not the
 * newest its package.json allows) from pnpm or yarn, which the build installs with npm; with both,
 * yarn.lock is used, as LangGraph's builder picks it; a lockfile out of step with package.json
 * fails the build saying to run `pnpm install` / `yarn install`. The manager's version comes from
 * `packageManager`, else from the lockfile's kind.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { loadProject } from "../../core/config/index.ts";
import { PluginDriver } from "../../core/kernel/index.ts";
import { readBundle } from "../../core/bundle/index.ts";
import type { ComputeContext, RolloutRequest } from "../../core/kernel/index.ts";
import { K8sCompute } from "../../plugins/compute/kubernetes.ts";
import { DEFAULT_MANAGERS, unitManager } from "../../core/platform/reconciler/packages-managers.ts";
import { deployedClient, type DeployPlatform, startDeployPlatform, userHeaders } from "./_deploy.ts";
import { ROOT } from "./_dev.ts";

const FIXTURE = join(ROOT, "tests/langgraph/fixtures/deploy-packages");
let cp: DeployPlatform;

before(async () => {
  cp = await startDeployPlatform();
});
after(async () => await cp?.close());

/** Runs the timer graph at `url`; its result. */
async function timer(url: string): Promise<{ millis: number; langgraph: string }> {
  const client = new Client({ apiUrl: url, apiKey: cp.key, callerOptions: { maxRetries: 0 } });
  const thread = await client.threads.create();
  return await client.runs.wait(thread.thread_id, "timer", { input: { duration: "2h" } }) as {
    millis: number;
    langgraph: string;
  };
}

/** The build log lines of a deployment's revision. */
async function buildLog(deploymentId: string, revisionId: string): Promise<string> {
  const res = await cp.api("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?kind=build`);
  return (res.logs as Array<{ message: string }>).map((l) => l.message).join("\n");
}

const deployed = (output: string) => {
  const m = output.match(/Deployed "deploy-packages-example" to platform: revision (\S+) is DEPLOYED/);
  assert.ok(m, output + cp.output());
  return { revision: m[1]!, url: output.match(/URL: (\S+)/)![1]! };
};

describe("a LangGraph.js project's own npm packages, installed by the control plane's build", () => {
  let url = "";
  let deploymentId = "";
  let first = "";

  test("deploys; the build installs the dependencies and the graph runs with them", async () => {
    const dir = cp.project(FIXTURE);
    const dry = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--dry-run"]);
    assert.equal(dry.code, 0, dry.output);
    assert.ok(!dry.output.includes("would refuse"), dry.output);
    const bundle = await readBundle(readFileSync(join(dir, ".agentcli/bundle.tgz")));
    assert.deepEqual([...bundle.files.keys()].sort(), [
      "langgraph.json",
      "package-lock.json",
      "package.json",
      "src/timer.ts",
    ]);
    const out = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
    assert.equal(out.code, 0, out.output + cp.output());
    ({ revision: first, url } = deployed(out.output));
    const all = (await cp.api("GET", "/v2/deployments")).resources as Array<{ id: string; name: string }>;
    deploymentId = all.find((d) => d.name === "deploy-packages-example")!.id;
    const result = await timer(url);
    assert.equal(result.millis, 7_200_000);
    // The project's own @langchain/langgraph, installed under the control plane's data folder.
    assert.ok(result.langgraph.startsWith(`file://${cp.dataDir}/`), result.langgraph);
    assert.ok(!result.langgraph.startsWith(`file://${ROOT}`), result.langgraph);
    const log = await buildLog(deploymentId, first);
    assert.match(log, /installing the npm packages of the project: npm ci \(package-lock\.json\)/);
    assert.match(log, /installed the npm packages [0-9a-f]{12}/);
  });

  test("the same package.json and lockfile deployed again reuse the install", async () => {
    assert.ok(url, "the first test deployed");
    const dir = cp.project(FIXTURE, (d) => {
      writeFileSync(join(d, "src/timer.ts"), readFileSync(join(d, "src/timer.ts"), "utf8") + "\n// again\n");
    });
    const out = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
    assert.equal(out.code, 0, out.output + cp.output());
    const { revision } = deployed(out.output);
    assert.match(await buildLog(deploymentId, revision), /reusing the installed npm packages [0-9a-f]{12}/);
    first = revision;
    assert.equal((await timer(url)).millis, 7_200_000);
  });

  for (
    const [name, change, reason] of [
      [
        "a package the registry does not have",
        (pkg: Record<string, any>) => (pkg.dependencies["agentcli-no-such-package-3e1b9c"] = "1.0.0"),
        /npm install failed: .*(404|E404).*agentcli-no-such-package-3e1b9c/,
      ],
      [
        "a lockfile out of step with package.json",
        (pkg: Record<string, any>) => (pkg.dependencies.ms = "2.1.2"),
        /npm ci failed: .*(in sync|package-lock\.json)/,
      ],
    ] as const
  ) {
    test(`${name}: BUILD_FAILED with npm's reason; the previous revision keeps serving`, async () => {
      assert.ok(url, "the first test deployed");
      const dir = cp.project(FIXTURE, (d) => {
        const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
        change(pkg);
        writeFileSync(join(d, "package.json"), JSON.stringify(pkg, null, 2));
        // Without a lockfile npm installs from package.json (and asks the registry for the missing package).
        if (name.startsWith("a package")) rmSync(join(d, "package-lock.json"));
      });
      const out = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
      assert.equal(out.code, 1, out.output);
      assert.match(out.output, /BUILD_FAILED/);
      assert.match(out.output, reason);
      const d = await cp.api("GET", `/v2/deployments/${deploymentId}`);
      const failed = await cp.api("GET", `/v2/deployments/${deploymentId}/revisions/${d.latest_revision_id}`);
      assert.equal(failed.status, "BUILD_FAILED");
      assert.match(failed.status_message, reason);
      const log = await buildLog(deploymentId, failed.id);
      for (const text of [failed.status_message, log]) {
        assert.ok(!text.includes(cp.dataDir) && !text.includes(tmpdir() + "/"), text);
      }
      assert.equal(d.active_revision_id, first);
      assert.equal((await timer(url)).millis, 7_200_000);
    });
  }
});

describe("a project with a pnpm-lock.yaml or a yarn.lock", () => {
  // package.json allows ^2.1.0 (2.1.3 is the newest); both lockfiles pin 2.1.2.
  const LOCKS = join(ROOT, "tests/langgraph/fixtures/deploy-lockfiles");
  let url = "";
  let deploymentId = "";
  let serving = "";

  /** Runs the version graph at `url`: the installed `ms` version and where it loads from. */
  async function installed(): Promise<{ millis: number; version: string; path: string }> {
    const client = new Client({ apiUrl: url, apiKey: cp.key, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    return await client.runs.wait(thread.thread_id, "version", { input: { duration: "1m" } }) as {
      millis: number;
      version: string;
      path: string;
    };
  }

  for (
    const [manager, remove, lockLine] of [
      ["pnpm", "yarn.lock", /installing the npm packages of the project: pnpm install \(pnpm-lock\.yaml\) with pnpm@/],
      // Both lockfiles: yarn.lock is used, as LangGraph's builder picks it.
      [
        "yarn",
        "",
        /installing the npm packages of the project: yarn install \(yarn\.lock\) with yarn@1\./,
      ],
    ] as const
  ) {
    test(`${manager} installs the version its lockfile pins, no manager on the control plane needed`, async () => {
      const dir = cp.project(LOCKS, (d) => remove && rmSync(join(d, remove)));
      const out = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
      assert.equal(out.code, 0, out.output + cp.output());
      const m = out.output.match(/Deployed "deploy-lockfiles-example" to platform: revision (\S+) is DEPLOYED/);
      assert.ok(m, out.output + cp.output());
      serving = m[1]!;
      url = out.output.match(/URL: (\S+)/)![1]!;
      const all = (await cp.api("GET", "/v2/deployments")).resources as Array<{ id: string; name: string }>;
      deploymentId = all.find((d) => d.name === "deploy-lockfiles-example")!.id;
      const result = await installed();
      assert.equal(result.millis, 60_000);
      assert.equal(result.version, "2.1.2");
      assert.ok(result.path.startsWith(`file://${cp.dataDir}/`), result.path);
      const log = await buildLog(deploymentId, serving);
      assert.match(log, lockLine);
      assert.match(log, new RegExp(`^${manager}: `, "m"));
      if (manager === "yarn") assert.match(log, /the project also has pnpm-lock\.yaml: yarn\.lock is used/);
      assert.ok(!log.includes(cp.dataDir), log);
    });
  }

  for (const [manager, remove] of [["pnpm", "yarn.lock"], ["yarn", "pnpm-lock.yaml"]] as const) {
    const lock = remove === "yarn.lock" ? "pnpm-lock.yaml" : "yarn.lock";
    test(`a ${lock} out of step with package.json: BUILD_FAILED saying to run \`${manager} install\``, async () => {
      assert.ok(url, "a test above deployed");
      const dir = cp.project(LOCKS, (d) => {
        rmSync(join(d, remove));
        const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
        pkg.dependencies.ms = "2.1.3";
        writeFileSync(join(d, "package.json"), JSON.stringify(pkg, null, 2));
      });
      const out = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
      assert.equal(out.code, 1, out.output);
      const reason = new RegExp(
        `${manager} install failed: ${
          lock.replace(".", "\\.")
        } of the project is out of date with its package\\.json; ` +
          `run \`${manager} install\` and commit ${lock.replace(".", "\\.")}`,
      );
      assert.match(out.output, reason);
      const d = await cp.api("GET", `/v2/deployments/${deploymentId}`);
      const failed = await cp.api("GET", `/v2/deployments/${deploymentId}/revisions/${d.latest_revision_id}`);
      assert.equal(failed.status, "BUILD_FAILED");
      const log = await buildLog(deploymentId, failed.id);
      assert.match(log, new RegExp(`^${manager}: .*(OUTDATED_LOCKFILE|lockfile needs to be updated)`, "m"));
      for (const text of [failed.status_message, log]) {
        assert.ok(!text.includes(cp.dataDir) && !text.includes(tmpdir() + "/"), text);
      }
      assert.equal(d.active_revision_id, serving);
      assert.equal((await installed()).version, "2.1.2");
    });
  }
});

describe("the manager of a lockfile", () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  const manager = (lock: string, text: string, packageManager?: string) =>
    unitManager({
      manifest: bytes(JSON.stringify({ name: "p", packageManager })),
      lock: { name: lock, bytes: bytes(text) },
    });

  test("packageManager names the version; else the lockfile's kind picks a pinned default", () => {
    assert.equal(manager("package-lock.json", "{}"), null);
    assert.equal(manager("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")!.spec, `pnpm@${DEFAULT_MANAGERS.pnpm.latest}`);
    assert.equal(manager("pnpm-lock.yaml", "lockfileVersion: '6.0'\n")!.spec, `pnpm@${DEFAULT_MANAGERS.pnpm["6"]}`);
    assert.equal(manager("pnpm-lock.yaml", "lockfileVersion: '9.0'\n", "pnpm@9.15.0+sha512.abc")!.spec, "pnpm@9.15.0");
    assert.equal(manager("yarn.lock", "# yarn lockfile v1\n")!.spec, `yarn@${DEFAULT_MANAGERS.yarn}`);
    const berry = manager("yarn.lock", "__metadata:\n  version: 8\n  cacheKey: 10c0\n")!;
    assert.deepEqual([berry.spec, berry.berry], ["@yarnpkg/cli-dist@4.9.0", true]);
    const newer = manager("yarn.lock", "__metadata:\n  version: 12\n")!.spec;
    assert.equal(newer, `@yarnpkg/cli-dist@${DEFAULT_MANAGERS.berry.latest}`);
    assert.equal(manager("yarn.lock", "__metadata:\n", "yarn@3.6.4")!.spec, "@yarnpkg/cli-dist@3.6.4");
    // Another manager's field, or a version that is not one, leaves the default.
    assert.equal(manager("yarn.lock", "# yarn lockfile v1\n", "pnpm@9.15.0")!.spec, `yarn@${DEFAULT_MANAGERS.yarn}`);
    assert.equal(manager("pnpm-lock.yaml", "", "pnpm@latest; rm -rf /")!.spec, `pnpm@${DEFAULT_MANAGERS.pnpm.latest}`);
  });
});

describe("node_version", () => {
  const driver = new PluginDriver([]);
  const load = async (nodeVersion: string) => {
    const dir = mkdtempSync(join(tmpdir(), "agentcli-node-version-"));
    writeFileSync(join(dir, "graph.ts"), "export const graph = null;\n");
    writeFileSync(
      join(dir, "langgraph.json"),
      JSON.stringify({ node_version: nodeVersion, graphs: { g: "./graph.ts" } }),
    );
    try {
      return await loadProject(dir, { driver, env: {}, requireEnv: false, cwd: dir });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  test("22 and later are accepted; an older one is refused naming the key", async () => {
    assert.equal((await load("22")).config.langgraph!.node_version, "22");
    assert.equal((await load("24.1")).config.langgraph!.node_version, "24.1");
    await assert.rejects(
      async () => await load("20"),
      (err: Error & { diagnostics?: Array<{ message: string }> }) => {
        const text = (err.diagnostics ?? []).map((d) => d.message).join("\n");
        assert.match(text, /"node_version" must be 22 or later: agentcli runs graphs on Node\.js 22\+/);
        return true;
      },
    );
  });
});

describe("examples/langgraph-js with a package agentcli does not lend", () => {
  test("its own installed @langchain/*, SDK (custom auth) and hono serve the graphs, routes and auth", async () => {
    const dir = cp.project(join(ROOT, "examples/langgraph-js"), (d) => {
      const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
      pkg.dependencies.ms = "2.1.3";
      writeFileSync(join(d, "package.json"), JSON.stringify(pkg, null, 2));
    });
    const out = await cp.agentcli(dir, ["deploy", "--platform-url", cp.base, "--yes"]);
    assert.equal(out.code, 0, out.output + cp.output());
    const url = out.output.match(/URL: (\S+)/)![1]!;
    const headers = userHeaders(cp);
    const client = deployedClient(cp, url);
    const thread = await client.threads.create();
    const chat = await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "ping" }] },
    }) as { messages: Array<{ content: string }>; ui: Array<{ name: string }> };
    assert.equal(chat.messages.at(-1)!.content, "Hello! You said: ping");
    assert.deepEqual(chat.ui.map((m) => m.name), ["greeting"]);
    assert.deepEqual(
      await client.runs.wait(null, "counter", { input: { count: 1 }, config: { configurable: { step: 3 } } }),
      {
        count: 4,
      },
    );
    assert.deepEqual(await (await fetch(`${url}/hello`, { headers })).json(), { hello: "Hello" });
    // The project's Auth (its own @langchain/langgraph-sdk) refuses a request without its token.
    const anonymous = await fetch(`${url}/assistants/search`, {
      method: "POST",
      headers: { "x-api-key": cp.key, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(anonymous.status, 401);
  });
});

describe("agentcli dev on the project before npm install", () => {
  test("fails naming the package, and says the install is the user's", async () => {
    const dir = cp.project(FIXTURE);
    const child = spawn(process.execPath, [join(ROOT, "bin/agentcli.js"), "dev", "--port", "0"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", BROWSER: "none" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const code = await new Promise((r) => child.on("close", r));
    assert.notEqual(code, 0, output);
    assert.match(output, /Cannot load graph "timer" of langgraph\.json from .*timer\.ts: Cannot find package 'ms'/);
    assert.match(output, /under `agentcli dev` run `npm install` in the project first/);
  });
});

describe("the k8s compute", () => {
  test("refuses a revision whose build installed npm packages, saying why", async () => {
    const compute = new K8sCompute({} as ComputeContext);
    await assert.rejects(
      compute.rollout({ packages: "/data/packages/abc", bundle: new Uint8Array(1) } as RolloutRequest),
      /the k8s compute cannot give a revision the npm packages its build installed .*do not install packages/,
    );
  });
});
