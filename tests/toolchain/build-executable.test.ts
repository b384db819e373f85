/**
 * `agentcli --plugin ... build --output <file>`: a custom single executable with a plugin file
 * and an installed plugin package compiled in; it lists them in `agentcli plugins` and uses
 * them with an empty environment (no Node on PATH): a compiled-in deploy target, the
 * built-in `docker` target putting this very executable in the image's build context, and
 * `dev` on embedded storage seeded from the template the build embedded. Built twice from the
 * same inputs, each time with an empty home and cache folder, the executables are
 * byte-identical.
 * The one test that builds executables (heavy: two builds, about a minute and 1.4 GB each).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { SERVING, spawnServing } from "../_spawn-serving.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

test("build compiles plugins into a single executable that lists and uses them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-build-"));
  try {
    writeFileSync(
      join(dir, "echo-target.ts"),
      `import { definePlugin } from "agentcli";
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
`,
    );
    const pkg = join(dir, "node_modules/agentcli-plugin-hello");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "agentcli-plugin-hello", version: "0.4.2", type: "module", exports: "./index.js" }),
    );
    writeFileSync(
      join(pkg, "index.js"),
      `export default { name: "hello", kind: "extension", hooks: { "bundle:build": ({ files }) => { files.set("HELLO.md", new TextEncoder().encode("hello\\n")); } } };\n`,
    );

    // Each build with its own empty home and cache: nothing a build makes may come from an
    // earlier one, or from this machine's state.
    const build = (output: string) => {
      const home = mkdtempSync(join(tmpdir(), "agentcli-build-home-"));
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CACHE_HOME: join(home, "cache") };
      delete env.AGENTCLI_TEMPLATE_CACHE;
      try {
        const r = spawnSync(join(ROOT, "node_modules/.bin/node"), [
          join(ROOT, "bin/agentcli.js"),
          "--plugin",
          "./echo-target.ts",
          "--plugin",
          "agentcli-plugin-hello",
          "build",
          "--output",
          output,
        ], { cwd: dir, encoding: "utf8", env });
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.deepEqual(readdirSync(home), [], "the build keeps nothing in the home or cache folder");
        return r;
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    };
    const exe = join(dir, "agentcli-custom");
    const built = build(exe);
    assert.match(built.stdout, /deploy-echo .*deploy --target echo/);
    assert.match(built.stdout, /Built .*agentcli-custom with 2 extra plugins/);

    // The same inputs again, from clean caches: a byte-identical executable.
    const again = join(dir, "agentcli-custom-again");
    build(again);
    const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
    assert.equal(sha256(again), sha256(exe), "the build is deterministic");
    rmSync(again);

    const plugins = JSON.parse(
      execFileSync(exe, ["plugins", "--json"], { cwd: dir, env: {}, encoding: "utf8" }),
    ) as Array<{ name: string; version: string; kind: string; hooks: string[] }>;
    const byName = new Map(plugins.map((p) => [p.name, p]));
    assert.deepEqual(byName.get("hello"), {
      ...byName.get("hello"),
      version: "0.4.2",
      kind: "extension",
      hooks: ["bundle:build"],
    });
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
    assert.deepEqual(
      readFileSync(join(project, ".agentcli/docker/agentcli")),
      readFileSync(exe),
      "the image gets this executable",
    );

    // `dev` with embedded storage, no Node and an empty home: the database is restored from the
    // template the build embedded (its system identifier holds the build's fixed clock,
    // 2000-01-01; an initdb here would hold today's), and serves the Agent API.
    const home = join(dir, "dev-home");
    mkdirSync(home);
    const dev = await spawnServing({
      serving: SERVING.dev,
      start: (port) =>
        spawn(exe, ["dev", "--port", String(port)], {
          cwd: project,
          env: { HOME: home },
          stdio: ["ignore", "pipe", "pipe"],
        }),
    });
    try {
      const client = new Client({ apiUrl: dev.url });
      await client.assistants.search();
      const thread = await client.threads.create({ metadata: { built: "twice" } });
      assert.equal((await client.threads.get(thread.thread_id)).metadata?.built, "twice");
      const control = readFileSync(join(project, ".agentcli/db/global/pg_control"));
      assert.equal(
        control.readBigUInt64LE(0) >> 32n,
        BigInt(Date.UTC(2000, 0, 1) / 1000),
        "restored from the embedded template",
      );
    } finally {
      await dev.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("build refuses a plugin that is neither a file nor an installed package, and needs --output", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-build-"));
  try {
    const run = (args: string[]) =>
      spawnSync(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/agentcli.js"), ...args], {
        cwd: dir,
        encoding: "utf8",
      });
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
