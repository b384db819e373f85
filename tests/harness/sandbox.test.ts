/**
 * `execute`: offered only with a sandbox; runs through the `sandbox:create` hook (one
 * sandbox per thread); with no plugin answering for the provider it is a clear tool error.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { definePlugin, type Sandbox } from "../../core/hooks.ts";
import { makeConfig, userConfigurable } from "./_bundle.ts";
import { startHarness, type Harness } from "./_harness.ts";

const harnesses: Harness[] = [];
after(async () => {
  for (const h of harnesses) await h.dispose();
});
const sandbox = { provider: "sandbox_a", template: "agentcli-default", image: "python:3", scope: "thread" as const };

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
  const h = await startHarness({ config: makeConfig({ sandbox }), files: { "AGENTS.md": "A" }, env: { SANDBOX_A_API_KEY: "k" } });
  harnesses.push(h);
  h.server.script({ toolCalls: [{ name: "execute", args: { command: "echo hi" } }] }, { text: "cannot run" });
  const out = await h.run("run echo", { thread_id: "e1", ...userConfigurable("alice") });
  assert.ok(h.server.requests[0].tools.includes("execute"));
  const tool = out.messages.find((m) => m.getType() === "tool")!;
  assert.equal(tool.status, "error");
  assert.match(String(tool.content), /no runtime for sandbox provider "sandbox_a" is installed/);
});

test("a plugin runtime: one sandbox per thread, reused across turns", async () => {
  const created: string[] = [];
  const plugin = definePlugin({
    name: "test-sandbox-runtime",
    kind: "extension",
    hooks: {
      "sandbox:create": ({ provider, key }) => {
        if (provider !== "sandbox_a") return null;
        created.push(key);
        const box: Sandbox = {
          id: key,
          execute: async (command) => ({ output: `[${key}] ran: ${command}`, exitCode: 0, truncated: false }),
          uploadFiles: async (files) => files.map((f) => ({ path: f.path, error: null })),
          downloadFiles: async (paths) => paths.map((path) => ({ path, content: null, error: "file_not_found" as const })),
          delete: async () => {},
        };
        return box;
      },
    },
  });
  const h = await startHarness({ config: makeConfig({ sandbox }), files: { "AGENTS.md": "A" }, plugins: [plugin], env: { SANDBOX_A_API_KEY: "k" } });
  harnesses.push(h);
  for (const [thread, turn] of [["e2", 1], ["e2", 2], ["e3", 1]] as const) {
    h.server.script({ toolCalls: [{ name: "execute", args: { command: `echo ${turn}` } }] }, { text: "done" });
    const out = await h.run("run", { thread_id: thread });
    const tool = out.messages.filter((m) => m.getType() === "tool").at(-1)!;
    assert.match(String(tool.content), new RegExp(`\\[thread:${thread}\\] ran: echo ${turn}\n\\[Command succeeded with exit code 0\\]`));
  }
  assert.deepEqual(created, ["thread:e2", "thread:e3"]);
});
