/** The plugin driver and third-party plugin loading. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { definePlugin } from "../../core/kernel/hooks.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { AgentcliError } from "../../core/kernel/errors.ts";
import { cli, makeProject, removeProject } from "./_project.ts";

const ext = (name: string, hooks: object) => definePlugin({ name, kind: "extension", hooks });

test("first: the first non-null answer wins; sequential: each sees the last result", async () => {
  const calls: string[] = [];
  const d = new PluginDriver([
    ext("a", { "auth:authenticate": () => (calls.push("a"), null) }),
    ext("b", { "auth:authenticate": () => (calls.push("b"), { identity: "u1", isAuthenticated: true }) }),
    ext("c", { "auth:authenticate": () => (calls.push("c"), { identity: "u2", isAuthenticated: true }) }),
  ]);
  const user = await d.runFirst("auth:authenticate", {
    request: new Request("http://x/"),
    provider: null,
    env: {},
    dev: false,
  });
  assert.equal(user?.identity, "u1");
  assert.deepEqual(calls, ["a", "b"]);
  assert.equal(
    (await d.runFirst("auth:authenticate", { request: new Request("http://x/"), provider: null, env: {}, dev: false }, {
      only: "c",
    }))?.identity,
    "u2",
  );
});

test("provider: the driver chooses the plugin whose spec declares the key; a first hook is asked of it only", async () => {
  const calls: string[] = [];
  const box = (id: string) => ({
    id,
    execute: async () => ({ output: "", exitCode: 0, truncated: false }),
    uploadFiles: async () => [],
    downloadFiles: async () => [],
    delete: async () => {},
  });
  const sandbox = (provider: string) =>
    definePlugin({
      name: `sandbox-${provider}`,
      kind: "sandbox",
      sandbox: {
        provider,
        env: [],
        partnerPackage: null,
        defaultTemplate: "",
        capabilities: { persistentFiles: false, network: false, gpu: false },
      },
      // No comparison of opts.provider: the driver chooses.
      hooks: { "sandbox:create": () => (calls.push(provider), box(provider)) },
    });
  const target = (name: string) =>
    definePlugin({
      name: `deploy-${name}`,
      kind: "deploy",
      deploy: { target: name, env: [] },
      hooks: {
        "deploy:target": () => (calls.push(name), { deploymentId: name, revisionId: "r", url: null, status: "ok" }),
      },
    });
  const d = new PluginDriver([sandbox("one"), sandbox("two"), target("left"), target("right")]);
  const opts = (provider: string) => ({
    provider,
    key: "k",
    scope: "thread" as const,
    template: "t",
    image: "i",
    env: {},
  });
  assert.equal((await d.runProvider({ hook: "sandbox:create", kind: "sandbox", key: "two" }, opts("two")))?.id, "two");
  assert.equal(await d.runProvider({ hook: "sandbox:create", kind: "sandbox", key: "three" }, opts("three")), null);
  assert.equal(d.provider("deploy", "right")?.name, "deploy-right");
  assert.equal(d.spec("sandbox", "one")?.provider, "one");
  assert.deepEqual(d.specs("deploy").map((s) => s.target), ["left", "right"]);
  assert.deepEqual(calls, ["two"]);
  // A spec-only provider: plugins without a spec (kind "extension") are asked, the other providers are not.
  const specOnly = definePlugin({
    name: "spec-only",
    kind: "sandbox",
    sandbox: {
      provider: "mine",
      env: [],
      partnerPackage: null,
      defaultTemplate: "",
      capabilities: { persistentFiles: false, network: false, gpu: false },
    },
  });
  const runtime = ext("runtime", {
    "sandbox:create": (o: { provider: string }) => (o.provider === "mine" ? box("ext") : null),
  });
  const d2 = new PluginDriver([sandbox("one"), specOnly, runtime]);
  calls.length = 0;
  assert.equal(
    (await d2.runProvider({ hook: "sandbox:create", kind: "sandbox", key: "mine" }, opts("mine")))?.id,
    "ext",
  );
  assert.deepEqual(calls, []);
  // memory: by plugin name (AGENTCLI_MEMORY).
  const mem = ext("my-memory", {
    "memory:backend": () => ({
      get: async () => null,
      put: async () => {},
      delete: async () => {},
      list: async () => [],
    }),
  });
  assert.equal(new PluginDriver([mem]).provider("memory", "my-memory"), mem);
  assert.equal(new PluginDriver([ext("x", {})]).provider("memory", "x"), undefined);
});

test("a failing plugin is named with its hook; user errors keep their message", async () => {
  const d = new PluginDriver([ext("broken", {
    "sandbox:create": () => {
      throw new Error("boom");
    },
  })]);
  await assert.rejects(
    d.runFirst("sandbox:create", { provider: "x", key: "k", scope: "thread", template: "t", image: "i", env: {} }),
    (e: AgentcliError) => {
      assert.match(e.message, /hook "sandbox:create" of plugin "broken": boom/);
      return true;
    },
  );
  await assert.rejects(d.runSequential("auth:authenticate" as never, {} as never), /runs as "first"/);
});

test("third-party plugins from a file: valid, unknown keys, duplicate names, wrong kind", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-plugins-"));
  try {
    const file = (name: string, body: string) => (writeFileSync(join(dir, name), body), join(dir, name));
    const good = file(
      "good.mjs",
      `export default { name: "my-sandbox", kind: "sandbox", sandbox: { provider: "my_box", env: ["MY_BOX_KEY"], partnerPackage: "my-box", defaultTemplate: "t", capabilities: { persistentFiles: true, network: false, gpu: false } } };`,
    );
    const d = await loadPlugins(builtinPlugins, { paths: [good] });
    assert.ok(d.get("my-sandbox"));
    const expectInvalid = async (paths: string[], re: RegExp) =>
      assert.rejects(loadPlugins(builtinPlugins, { paths }), (e: AgentcliError) => {
        assert.equal(e.code, "PLUGIN_INVALID");
        assert.match(e.diagnostics.map((x) => x.message).join("\n") || e.message, re);
        return true;
      });
    await expectInvalid(
      [file("keys.mjs", `export default { name: "x", kind: "extension", colour: 1 };`)],
      /unknown key "colour"/,
    );
    await expectInvalid([file("kind.mjs", `export default { name: "x", kind: "database" };`)], /"kind" must be one of/);
    await expectInvalid([good, good], /registered twice/);
    await expectInvalid([
      file(
        "dup.mjs",
        `export default { name: "openai-2", kind: "model", model: { prefix: "openai", env: [], integrationPackage: "p", defaultModel: "m" } };`,
      ),
    ], /already provides/);
    await expectInvalid([
      file("hook.mjs", `export default { name: "x", kind: "extension", hooks: { "auth:login": () => null } };`),
    ], /unknown key "auth:login"/);
    await expectInvalid([join(dir, "missing.mjs")], /no such file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a plugin loaded with --plugin or AGENTCLI_PLUGINS extends what agent.toml accepts", () => {
  const dir = makeProject({
    "agent.toml": '[agent]\nname = "x"\nmodel = "openai:gpt-5"\n[sandbox]\nprovider = "my_box"\n',
    ".env": "OPENAI_API_KEY=k\nMY_BOX_KEY=s\n",
  });
  try {
    writeFileSync(
      join(dir, "box.mjs"),
      `export default { name: "my-sandbox", kind: "sandbox", sandbox: { provider: "my_box", env: ["MY_BOX_KEY"], partnerPackage: "my-box", defaultTemplate: "t", capabilities: { persistentFiles: true, network: false, gpu: false } } };`,
    );
    const without = cli(["deploy", "--dry-run"], { cwd: dir });
    assert.equal(without.code, 1);
    assert.match(without.stderr, /"my_box" is not a known sandbox provider/);
    const flag = cli(["--plugin", "box.mjs", "deploy", "--dry-run", "--json"], { cwd: dir });
    assert.equal(flag.code, 0, flag.output);
    assert.ok(JSON.parse(flag.stdout).requires.packages.includes("my-box"));
    const env = cli(["deploy", "--dry-run"], { cwd: dir, env: { AGENTCLI_PLUGINS: join(dir, "box.mjs") } });
    assert.equal(env.code, 0, env.output);
  } finally {
    removeProject(dir);
  }
});

test("a plugin's refusal keeps its 401/403 (also from another copy of agentcli); a crash is a 500 whose body names nothing", async () => {
  const { Hono } = await import("hono");
  const { errorHandler } = await import("../../core/server/http/errors.ts");
  const logged: string[] = [];
  const log = { info() {}, warn() {}, error: (m: string) => logged.push(m) };
  const foreignRefusal = Object.assign(new Error("Cannot authenticate request: banned"), { status: 403 });
  const d = new PluginDriver([
    ext("refuses", {
      "auth:authenticate": ({ provider }: { provider: string | null }) => {
        if (provider === "refuses") throw foreignRefusal;
        return null;
      },
    }),
    ext("crashes", {
      "auth:authenticate": () => {
        throw new TypeError("secret-detail is not a function");
      },
    }),
  ]);
  const app = new Hono();
  app.onError(errorHandler(log as never));
  app.get("/:provider", async (c) => {
    await d.runFirst("auth:authenticate", {
      request: c.req.raw,
      provider: c.req.param("provider"),
      env: {},
      dev: false,
    });
    return c.text("ok");
  });
  const refused = await app.request("/refuses");
  assert.equal(refused.status, 403);
  assert.match((await refused.json()).detail, /banned/);
  const crashed = await app.request("/other");
  assert.equal(crashed.status, 500);
  const body = await crashed.text();
  assert.doesNotMatch(body, /crashes|secret-detail/);
  assert.match(logged.join("\n"), /hook "auth:authenticate" of plugin "crashes": secret-detail is not a function/);
});
