/**
 * `execute`: offered only with a sandbox; runs through the `sandbox:create` hook (one
 * sandbox per thread); with no plugin answering for the provider it is a clear tool error.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { definePlugin, type Sandbox } from "../../core/kernel/hooks.ts";
import { makeConfig, makeSubagent, userConfigurable } from "./_bundle.ts";
import { type Harness, startHarness } from "./_harness.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { sandboxCredentialWarning } from "../../core/harness/sandbox/runtime.ts";

const harnesses: Harness[] = [];
after(async () => {
  for (const h of harnesses) await h.dispose();
});
const sandbox = { provider: "sandbox_a", template: "agentcli-default", image: "python:3", scope: "thread" as const };
/** A provider of this test's own (the built-in vendor plugins answer for theirs): declared, run by the test's plugins. */
const myBox = { ...sandbox, provider: "my_box" };
const myBoxSpec = definePlugin({
  name: "sandbox-my_box",
  kind: "sandbox",
  sandbox: {
    provider: "my_box",
    env: ["MY_BOX_KEY"],
    partnerPackage: null,
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: true, network: false, gpu: false },
  },
});

test("no sandbox: no execute tool", async () => {
  const h = await startHarness({ config: makeConfig(), files: { "AGENTS.md": "A" } });
  harnesses.push(h);
  h.server.script({ text: "hi" });
  await h.run("hi", { thread_id: "e0" });
  assert.ok(!h.server.requests[0].tools.includes("execute"));
});

test("a vendor sandbox without its credentials: execute is a tool error naming the variable to set", async () => {
  const h = await startHarness({ config: makeConfig({ sandbox }), files: { "AGENTS.md": "A" } });
  harnesses.push(h);
  h.server.script({ toolCalls: [{ name: "execute", args: { command: "echo hi" } }] }, { text: "cannot run" });
  const out = await h.run("run echo", { thread_id: "e0b", ...userConfigurable("alice") });
  const tool = out.messages.find((m) => m.getType() === "tool")!;
  assert.equal(tool.status, "error");
  assert.match(String(tool.content), /"SANDBOX_A_API_KEY" is not set/);
  assert.match(String(tool.content), /--sandbox local/);
});

test("a vendor sandbox without a runtime: execute is a tool error naming the missing runtime", async () => {
  const h = await startHarness({
    config: makeConfig({ sandbox: myBox }),
    files: { "AGENTS.md": "A" },
    plugins: [myBoxSpec],
    env: { MY_BOX_KEY: "k" },
  });
  harnesses.push(h);
  h.server.script({ toolCalls: [{ name: "execute", args: { command: "echo hi" } }] }, { text: "cannot run" });
  const out = await h.run("run echo", { thread_id: "e1", ...userConfigurable("alice") });
  assert.ok(h.server.requests[0].tools.includes("execute"));
  const tool = out.messages.find((m) => m.getType() === "tool")!;
  assert.equal(tool.status, "error");
  assert.match(String(tool.content), /no runtime for sandbox provider "my_box" is installed/);
});

test("a plugin runtime: one sandbox per thread, reused across turns", async () => {
  const created: string[] = [];
  const plugin = definePlugin({
    name: "test-sandbox-runtime",
    kind: "extension",
    hooks: {
      "sandbox:create": ({ provider, key }) => {
        if (provider !== "my_box") return null;
        created.push(key);
        const box: Sandbox = {
          id: key,
          execute: async (command) => ({ output: `[${key}] ran: ${command}`, exitCode: 0, truncated: false }),
          uploadFiles: async (files) => files.map((f) => ({ path: f.path, error: null })),
          downloadFiles: async (paths) =>
            paths.map((path) => ({ path, content: null, error: "file_not_found" as const })),
          delete: async () => {},
        };
        return box;
      },
    },
  });
  const h = await startHarness({
    config: makeConfig({ sandbox: myBox }),
    files: { "AGENTS.md": "A" },
    plugins: [myBoxSpec, plugin],
    env: { MY_BOX_KEY: "k" },
  });
  harnesses.push(h);
  for (const [thread, turn] of [["e2", 1], ["e2", 2], ["e3", 1]] as const) {
    h.server.script({ toolCalls: [{ name: "execute", args: { command: `echo ${turn}` } }] }, { text: "done" });
    const out = await h.run("run", { thread_id: thread });
    const tool = out.messages.filter((m) => m.getType() === "tool").at(-1)!;
    assert.match(
      String(tool.content),
      new RegExp(`\\[thread:${thread}\\] ran: echo ${turn}\n\\[Command succeeded with exit code 0\\]`),
    );
  }
  assert.deepEqual(created, ["thread:e2", "thread:e3"]);
});

test("a subagent runs commands in the thread's sandbox; its skills are copied under /skills/subagents/<name>/", async () => {
  const uploads: string[] = [];
  const runs: string[] = [];
  const plugin = definePlugin({
    name: "test-sandbox-subagent",
    kind: "extension",
    hooks: {
      "sandbox:create": ({ provider, key }) =>
        provider !== "my_box" ? null : {
          id: `box-${key}`,
          execute: async (command) => (runs.push(`${key} ${command}`), { output: "ok", exitCode: 0, truncated: false }),
          uploadFiles: async (files) => files.map((f) => (uploads.push(f.path), { path: f.path, error: null })),
          downloadFiles: async (paths) =>
            paths.map((path) => ({ path, content: null, error: "file_not_found" as const })),
          delete: async () => {},
        },
    },
  });
  const config = makeConfig({
    sandbox: myBox,
    skills: [{ name: "review", description: "Review", path: "skills/review" }],
    subagents: [
      makeSubagent({
        name: "runner",
        description: "Runs things",
        skills: [{ name: "lint", description: "Lint", path: "subagents/runner/skills/lint" }],
      }),
    ],
  });
  const h = await startHarness({
    config,
    plugins: [myBoxSpec, plugin],
    env: { MY_BOX_KEY: "k" },
    files: {
      "AGENTS.md": "Main. MARKER-MAIN",
      "skills/review/SKILL.md": "---\nname: review\ndescription: Review\n---\nReview.\n",
      "subagents/runner/AGENTS.md": "Runner. MARKER-RUNNER",
      "subagents/runner/skills/lint/SKILL.md": "---\nname: lint\ndescription: Lint\n---\nRun scripts/lint.sh.\n",
      "subagents/runner/skills/lint/scripts/lint.sh": "echo lint\n",
    },
  });
  harnesses.push(h);
  h.server.script(
    { when: "MARKER-MAIN", toolCalls: [{ name: "task", args: { subagent_type: "runner", description: "Lint it" } }] },
    {
      when: "MARKER-RUNNER",
      toolCalls: [{ name: "execute", args: { command: "bash /skills/subagents/runner/lint/scripts/lint.sh" } }],
    },
    { when: "MARKER-RUNNER", text: "linted" },
    { when: "MARKER-MAIN", text: "done" },
  );
  await h.run("lint", { thread_id: "sub1" });
  const runner = h.server.requests.filter((r) => r.system.includes("MARKER-RUNNER"));
  assert.ok(runner[0]!.tools.includes("execute"));
  assert.deepEqual(runs, ["thread:sub1 bash /skills/subagents/runner/lint/scripts/lint.sh"]);
  assert.deepEqual(uploads.sort(), [
    "/skills/review/SKILL.md",
    "/skills/subagents/runner/lint/SKILL.md",
    "/skills/subagents/runner/lint/scripts/lint.sh",
  ]);
});

test("at start, a provider without its credentials is a warning naming the variables (serve; dev lists them with the other missing ones)", () => {
  const driver = new PluginDriver(builtinPlugins);
  assert.match(
    sandboxCredentialWarning(driver, "sandbox_b", {}) ?? "",
    /needs SANDBOX_B_TOKEN_ID and SANDBOX_B_TOKEN_SECRET, which are not set[\s\S]*--sandbox local/,
  );
  assert.equal(
    sandboxCredentialWarning(driver, "sandbox_b", { SANDBOX_B_TOKEN_ID: "i", SANDBOX_B_TOKEN_SECRET: "s" }),
    null,
  );
  assert.equal(sandboxCredentialWarning(driver, "none", {}), null);
});
