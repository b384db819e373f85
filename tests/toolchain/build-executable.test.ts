/**
 * `agentcli --plugin ... build --output <file>`: a custom single executable with a plugin file
 * and an installed plugin package compiled in; it lists them in `agentcli plugins` and uses
 * them with an empty environment (no Node on PATH): a compiled-in deploy target, and the
 * built-in `docker` target putting this very executable in the image's build context. Built
 * twice from the same inputs, the executables are byte-identical.
 * The one test that builds executables (heavy: two builds, about a minute and 1.4 GB each).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

test("build compiles plugins into a single executable that lists and uses them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-build-"));
  try {
    writeFileSync(join(dir, "echo-target.ts"), `import { definePlugin } from "agentcli";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export default definePlugin({
  name: "deploy-echo",
  kind: "deploy",
  deploy: { target: "echo", env: [] },
  hooks: {
    "deploy:target": async ({ target, bundle, name, projectDir }) => {
      if (target !== "echo") return null;
      writeFileSync(join(projectDir, "echoed.tgz"), bundle);
      return { deploymentId: name, revisionId: "r1", url: null, status: "ECHOED" };
    },
  },
});
`);
    const pkg = join(dir, "node_modules/agentcli-plugin-hello");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "agentcli-plugin-hello", version: "0.4.2", type: "module", exports: "./index.js" }));
    writeFileSync(join(pkg, "index.js"), `export default { name: "hello", kind: "extension", hooks: { "bundle:build": ({ files }) => { files.set("HELLO.md", new TextEncoder().encode("hello\\n")); } } };\n`);

    const exe = join(dir, "agentcli-custom");
    const built = spawnSync(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/agentcli.js"), "--plugin", "./echo-target.ts", "--plugin", "agentcli-plugin-hello", "build", "--output", exe], { cwd: dir, encoding: "utf8", env: { ...process.env } });
    assert.equal(built.status, 0, built.stdout + built.stderr);
    assert.match(built.stdout, /deploy-echo .*deploy --target echo/);
    assert.match(built.stdout, /Built .*agentcli-custom with 2 extra plugins/);

    // The same inputs again: a byte-identical executable.
    const again = join(dir, "agentcli-custom-again");
    const rebuilt = spawnSync(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/agentcli.js"), "--plugin", "./echo-target.ts", "--plugin", "agentcli-plugin-hello", "build", "--output", again], { cwd: dir, encoding: "utf8", env: { ...process.env } });
    assert.equal(rebuilt.status, 0, rebuilt.stdout + rebuilt.stderr);
    const [first, second] = [readFileSync(exe), readFileSync(again)];
    assert.equal(createHash("sha256").update(second).digest("hex"), createHash("sha256").update(first).digest("hex"), "the build is deterministic");
    rmSync(again);

    const plugins = JSON.parse(execFileSync(exe, ["plugins", "--json"], { cwd: dir, env: {}, encoding: "utf8" })) as Array<{ name: string; version: string; kind: string; hooks: string[] }>;
    const byName = new Map(plugins.map((p) => [p.name, p]));
    assert.deepEqual(byName.get("hello"), { ...byName.get("hello"), version: "0.4.2", kind: "extension", hooks: ["bundle:build"] });
    assert.deepEqual(byName.get("deploy-echo")?.hooks, ["deploy:target"]);
    assert.ok(byName.has("openai") || byName.has("model-openai"), "the built-in plugins are still there");

    execFileSync(exe, ["init", "demo"], { cwd: dir, env: {} });
    const project = join(dir, "demo");
    writeFileSync(join(project, "agent.toml"), `[agent]\nname = "custom-exe"\nmodel = "openai:gpt-5"\n`);
    writeFileSync(join(project, ".env"), "OPENAI_API_KEY=sk-test\n");
    const echo = spawnSync(exe, ["deploy", "--target", "echo"], { cwd: project, env: {}, encoding: "utf8" });
    assert.equal(echo.status, 0, echo.stdout + echo.stderr);
    assert.match(echo.stdout, /Deployed "custom-exe" to echo: revision r1 is ECHOED/);
    const bundle = execFileSync("tar", ["-tzf", join(project, "echoed.tgz")], { encoding: "utf8" });
    assert.match(bundle, /project\/HELLO\.md/, "the compiled-in bundle:build hook ran");

    const docker = spawnSync(exe, ["deploy", "--target", "docker"], { cwd: project, env: {}, encoding: "utf8" });
    assert.equal(docker.status, 0, docker.stdout + docker.stderr);
    assert.deepEqual(readFileSync(join(project, ".agentcli/docker/agentcli")), readFileSync(exe), "the image gets this executable");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("build refuses a plugin that is neither a file nor an installed package, and needs --output", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-build-"));
  try {
    const run = (args: string[]) => spawnSync(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/agentcli.js"), ...args], { cwd: dir, encoding: "utf8" });
    const missing = run(["--plugin", "no-such-plugin", "build", "--output", "x"]);
    assert.equal(missing.status, 2, "a usage error");
    assert.match(missing.stderr, /Cannot build: plugin "no-such-plugin" is neither a file nor an installed package/);
    const noOutput = run(["build"]);
    assert.equal(noOutput.status, 2);
    assert.match(noOutput.stderr, /--output is required/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
