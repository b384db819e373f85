/**
 * A LangGraph.js project whose dependency comes from a private, scoped registry: `deploy`
 * bundles its `.npmrc` / `.yarnrc` / `.yarnrc.yml` (refusing a credential written in clear,
 * naming the file and line), and the control plane's build installs through them with npm
 * (package-lock.json), pnpm (pnpm-lock.yaml), yarn 1 and yarn 2+ (yarn.lock), the token a
 * `${NPM_TOKEN}` reference whose value is a secret of the deployment. The registry is a real
 * HTTP server speaking npm's registry protocol that answers 401 without the token. Real control
 * plane, real revisions, a recording compute; the token is in no log line, status or error. A
 * deployment without the secret fails its build naming the file, the line and the variable.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import process from "node:process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PluginDriver } from "../../core/kernel/index.ts";
import { loadProject } from "../../core/config/index.ts";
import { buildBundle, readBundle } from "../../core/bundle/index.ts";
import {
  deployBundle,
  keyedRequest,
  RecordingCompute,
  revisionSettled,
  startTestPlatform,
  type TestPlatform,
} from "./_harness.ts";
import { BuildFailure } from "../../core/platform/reconciler/build.ts";
import { projectSettings } from "../../core/platform/reconciler/packages-registries.ts";
import { npmLine } from "../../core/platform/reconciler/packages.ts";
import { type NpmRegistry, type Published, startNpmRegistry } from "./_npm-registry.ts";

const TOKEN = `acme${randomUUID().replaceAll("-", "")}`;
const compute = new RecordingCompute();
const lines: string[] = [];
let t: TestPlatform;
let registry: NpmRegistry;
let greet: Published;
let deploymentId = "";

before(async () => {
  registry = await startNpmRegistry({ token: TOKEN });
  greet = registry.publish("@acme/greet", "1.0.0", { "index.js": 'module.exports = "hello from acme";\n' });
  t = await startTestPlatform({ computeFor: () => compute, log: (line) => lines.push(line) });
  const d = await t.call("POST", "/v2/deployments", { body: { name: "private", source: "internal_source" } });
  assert.equal(d.status, 201, JSON.stringify(d.body));
  deploymentId = d.body.id;
});
after(async () => {
  await t?.close();
  await registry?.close();
});

const host = () => registry.url.replace(/^http:/, "");
const npmrc = () => `@acme:registry=${registry.url}/\n${host()}/:_authToken=\${NPM_TOKEN}\n`;

/** The project's files: a graph needing @acme/greet, langgraph.json with its `.env`, and `extra` (lockfile, settings). */
function projectFiles(variant: string, extra: Record<string, string>): Record<string, string> {
  return {
    "langgraph.json": JSON.stringify({
      node_version: "22",
      dependencies: ["."],
      graphs: { g: "./src/g.ts:graph" },
      env: ".env",
    }),
    "package.json": JSON.stringify({
      name: "private-example",
      description: variant,
      dependencies: { "@acme/greet": "1.0.0" },
    }),
    ".env": `NPM_TOKEN=${TOKEN}\n`,
    "src/g.ts": "export const graph = null;\n",
    ...extra,
  };
}

/** Loads the project as `deploy` does and packs its bundle. */
async function bundleOf(files: Record<string, string>): Promise<Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-registries-"));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const driver = new PluginDriver([]);
    const project = await loadProject(dir, { driver, env: {}, requireEnv: false, cwd: dir });
    return (await buildBundle(project, { driver, version: "0.0.0-test" })).bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Deploys `bundle` with `secrets`; the settled revision and its build log. */
async function deploy(bundle: Uint8Array, secrets: { name: string; value: string }[]) {
  const id = await deployBundle(t.platform.app, t.keyA, deploymentId, bundle, { secrets });
  const revision = await revisionSettled(t.platform.app, t.keyA, deploymentId, id, { attempts: 600 });
  const logs = await keyedRequest(
    t.platform.app,
    t.keyA,
    "GET",
    `/v2/deployments/${deploymentId}/revisions/${id}/logs?kind=build`,
  );
  const log = (logs.body.logs as Array<{ message: string }>).map((l) => l.message).join("\n");
  for (const text of [log, JSON.stringify(revision), lines.join("\n")]) assert.ok(!text.includes(TOKEN), text);
  return { revision, log };
}

const PACKAGE_LOCK = () =>
  JSON.stringify({
    name: "private-example",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "private-example", dependencies: { "@acme/greet": "1.0.0" } },
      "node_modules/@acme/greet": {
        version: "1.0.0",
        resolved: greet.tarball,
        integrity: greet.integrity,
        license: "MIT",
      },
    },
  });
const PNPM_LOCK = () =>
  `lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .:\n    dependencies:\n      '@acme/greet':\n        specifier: 1.0.0\n        version: 1.0.0\n\npackages:\n\n  '@acme/greet@1.0.0':\n    resolution: {integrity: ${greet.integrity}}\n\nsnapshots:\n\n  '@acme/greet@1.0.0': {}\n`;
const YARN_LOCK = () =>
  `# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n\n"@acme/greet@1.0.0":\n  version "1.0.0"\n  resolved "${greet.tarball}#${greet.shasum}"\n  integrity ${greet.integrity}\n`;

/** A yarn 2+ lockfile (format 8, yarn 4.9.0) of the project: resolutions only, no URL (yarn 2+ asks the scope's registry). */
const berryLockfile = () =>
  `# This file is generated by running "yarn install" inside your project.\n# Manual changes might be lost - proceed with caution!\n\n__metadata:\n  version: 8\n  cacheKey: 10c0\n\n"@acme/greet@npm:1.0.0":\n  version: 1.0.0\n  resolution: "@acme/greet@npm:1.0.0"\n  languageName: node\n  linkType: hard\n\n"private-example@workspace:.":\n  version: 0.0.0-use.local\n  resolution: "private-example@workspace:."\n  dependencies:\n    "@acme/greet": "npm:1.0.0"\n  languageName: unknown\n  linkType: soft\n`;

describe("deploy's bundle and the project's registry settings", () => {
  test("the .npmrc goes into the bundle; a credential in clear is refused naming the file and line, not its value", async () => {
    const bundle = await readBundle(
      await bundleOf(projectFiles("a", { ".npmrc": npmrc(), "package-lock.json": PACKAGE_LOCK() })),
    );
    assert.equal(new TextDecoder().decode(bundle.files.get(".npmrc")), npmrc());
    assert.ok(!bundle.files.has(".env"));
    const clear = "s3cretvalue0123456789";
    const dir = mkdtempSync(join(tmpdir(), "agentcli-registries-"));
    try {
      const files = projectFiles("a", {
        ".npmrc": `@acme:registry=${registry.url}/\n${host()}/:_authToken=${clear}\n`,
      });
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      // `deploy` (its dry run too) refuses; nothing names the value.
      const cli = join(import.meta.dirname, "../../bin/agentcli.js");
      const out = spawnSync(process.execPath, [cli, "deploy", "--dry-run", "--platform-url", "http://127.0.0.1:9"], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
        encoding: "utf8",
      });
      const output = out.stdout + out.stderr;
      assert.equal(out.status, 1, output);
      assert.match(
        output,
        /\.npmrc:2.*holds a credential in clear \(".*:_authToken"\): deploy refuses to put it in the bundle/,
      );
      assert.match(output, /\$\{NPM_TOKEN\}/);
      assert.ok(!output.includes(clear), output);
      assert.ok(!existsSync(join(dir, ".agentcli/bundle.tgz")));
      // `dev` runs the project: the file is left out of its bundle, with a warning.
      const driver = new PluginDriver([]);
      const project = await loadProject(dir, { driver, env: {}, requireEnv: false, cwd: dir });
      assert.ok(!project.files.has(".npmrc"));
      assert.deepEqual(project.warnings.map((w) => [w.file, w.line]), [[".npmrc", 2]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a dependency from a private scoped registry, the token a secret of the deployment", () => {
  const secrets = () => [{ name: "NPM_TOKEN", value: TOKEN }];
  for (
    const [manager, extra, line] of [
      ["npm", () => ({ ".npmrc": npmrc(), "package-lock.json": PACKAGE_LOCK() }), /npm ci \(package-lock\.json\)/],
      ["pnpm", () => ({ ".npmrc": npmrc(), "pnpm-lock.yaml": PNPM_LOCK() }), /pnpm install \(pnpm-lock\.yaml\)/],
      ["yarn 1", () => ({ ".npmrc": npmrc(), "yarn.lock": YARN_LOCK() }), /yarn install \(yarn\.lock\) with yarn@1\./],
      [
        "yarn 2+",
        () => ({
          ".yarnrc.yml":
            `npmScopes:\n  acme:\n    npmRegistryServer: "${registry.url}"\n    npmAuthToken: "\${NPM_TOKEN}"\nunsafeHttpWhitelist:\n  - "127.0.0.1"\n`,
          "yarn.lock": berryLockfile(),
        }),
        /yarn install \(yarn\.lock\) with @yarnpkg\/cli-dist@/,
      ],
    ] as const
  ) {
    test(`${manager} installs it through the project's settings`, async () => {
      const before = registry.requests.length;
      const { revision, log } = await deploy(await bundleOf(projectFiles(manager, extra())), secrets());
      assert.equal(revision.status, "DEPLOYED", JSON.stringify(revision) + log);
      assert.match(log, line);
      assert.match(log, /the project has \.(npmrc|yarnrc\.yml): its registry settings are used/);
      const packages = compute.rollouts.at(-1)!.packages!;
      const installed = join(packages, "node_modules/@acme/greet/index.js");
      assert.ok(existsSync(installed), log);
      assert.equal(readFileSync(installed, "utf8"), 'module.exports = "hello from acme";\n');
      const asked = registry.requests.slice(before);
      assert.ok(asked.some((r) => r.path.endsWith(".tgz") && r.authorized), JSON.stringify(asked));
    });
  }

  test("without the secret, the build fails naming the file, the line and the variable", async () => {
    const bundle = await bundleOf(projectFiles("missing", { ".npmrc": npmrc(), "package-lock.json": PACKAGE_LOCK() }));
    const { revision } = await deploy(bundle, []);
    assert.equal(revision.status, "BUILD_FAILED");
    assert.match(
      revision.status_message,
      /\.npmrc of the project, line 2 uses \$\{NPM_TOKEN\}, which is not a secret of the deployment: add NPM_TOKEN/,
    );
  });

  // "npm": the bundle the npm test installed (its install is not reused without the same token);
  // "wrong": another one (the private package is not in the npm cache another project installs from).
  for (const variant of ["npm", "wrong"]) {
    test(`a wrong token, ${variant === "npm" ? "an installed bundle" : "a new bundle"}: the registry's 401 fails the build, the token shown nowhere`, async () => {
      const bundle = await bundleOf(projectFiles(variant, { ".npmrc": npmrc(), "package-lock.json": PACKAGE_LOCK() }));
      const wrong = `${TOKEN}x`;
      const { revision, log } = await deploy(bundle, [{ name: "NPM_TOKEN", value: wrong }]);
      assert.equal(revision.status, "BUILD_FAILED", log);
      assert.match(revision.status_message, /npm ci failed: .*(401|E401|authentication|Unauthorized)/i);
      for (const text of [log, JSON.stringify(revision)]) assert.ok(!text.includes(wrong), text);
    });
  }
});

describe("the settings the install writes out", () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  const env = { NPM_TOKEN: "tok-0123456789" };

  test("paths, programs and plugins of the control plane are left out; pnpm's credentials move to its user settings", () => {
    const s = projectSettings([
      {
        name: ".npmrc",
        bytes: enc(
          "@acme:registry=https://npm.acme.example/\ncache=/etc\ngit=/bin/evil\n//npm.acme.example/:_authToken=${NPM_TOKEN}\n",
        ),
      },
      {
        name: ".yarnrc.yml",
        bytes: enc(
          'yarnPath: .yarn/releases/yarn.cjs\nplugins:\n  - path: .yarn/plugins/x.cjs\nnpmRegistryServer: "https://npm.acme.example"\n',
        ),
      },
    ], { shown: "the project", env, pnpm: true });
    assert.deepEqual(s.dropped, [".npmrc cache", ".npmrc git", ".yarnrc.yml yarnPath", ".yarnrc.yml plugins"]);
    assert.equal(s.files[0]!.text, "@acme:registry=https://npm.acme.example/\n");
    assert.equal(s.userConfig, "//npm.acme.example/:_authToken=${NPM_TOKEN}");
    assert.equal(s.files[1]!.text, 'npmRegistryServer: "https://npm.acme.example"\n');
    assert.deepEqual([s.registry, s.env], [true, env]);
  });

  test("a credential in clear or a variable the deployment lacks is a build failure naming file and line", () => {
    assert.throws(
      () =>
        projectSettings(
          [{ name: ".yarnrc.yml", bytes: enc("npmScopes:\n  acme:\n    npmAuthToken: abcdef123456\n") }],
          { shown: "./lib", env, pnpm: false },
        ),
      (err: Error) =>
        err instanceof BuildFailure &&
        /^\.yarnrc\.yml of \.\/lib, line 3 holds a credential in clear \("npmAuthToken"\)/.test(err.message) &&
        !err.message.includes("abcdef123456"),
    );
    assert.throws(
      () =>
        projectSettings([{ name: ".yarnrc", bytes: enc('"//npm.acme.example/:_authToken" "${ACME_TOKEN}"\n') }], {
          shown: "the project",
          env,
          pnpm: false,
        }),
      /: \.yarnrc of the project, line 1 uses \$\{ACME_TOKEN\}, which is not a secret of the deployment/,
    );
    // Another form a manager expands names a variable too: none of the control plane's is reachable.
    assert.throws(
      () =>
        projectSettings([{ name: ".npmrc", bytes: enc("//evil.example/:_authToken=${NODE_AUTH_TOKEN?}\n") }], {
          shown: "the project",
          env,
          pnpm: false,
        }),
      /line 1 uses \$\{NODE_AUTH_TOKEN\}, which is not a secret of the deployment/,
    );
  });

  test("a secret's value is hidden in the lines of the install", () => {
    const line = npmLine(
      "npm error 401 Unauthorized - GET https://npm.acme.example/x (token tok-0123456789)",
      "/tmp/x",
      [
        env.NPM_TOKEN,
      ],
    );
    assert.equal(line, "npm error 401 Unauthorized - GET https://npm.acme.example/x (token [redacted])");
  });
});
