/**
 * A sandbox's `close()` runs once, at shutdown: `dev` reloads (hostBundle's `reload`, what
 * `agentcli dev` does on save) keep the sandbox a thread uses, and the next run on that thread
 * uses the same one; shutdown closes each open sandbox once. The sandbox comes from a
 * third-party plugin (an in-memory provider that counts its calls), driven with the LangGraph
 * SDK through a real model wire (the OpenAI fixture server).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { loadProject } from "../../core/config/load.ts";
import { buildBundle, readBundle } from "../../core/bundle/bundle.ts";
import { type Host, hostBundle } from "../../core/server/host/agent-host.ts";
import { definePlugin } from "../../core/kernel/hooks.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import type { Sandbox } from "../../core/kernel/sandbox-contract.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";

const calls = { created: 0, attached: 0, closed: 0, executed: [] as string[] };

const counting = definePlugin({
  name: "sandbox-counting",
  kind: "sandbox",
  sandbox: {
    provider: "counting",
    env: [],
    partnerPackage: null,
    defaultTemplate: "default",
    workdir: "/workspace",
    capabilities: { persistentFiles: true, network: false, gpu: false },
  },
  hooks: {
    "sandbox:create": async ({ provider, sandboxId }) => {
      if (provider !== "counting") return null;
      if (sandboxId) calls.attached++;
      else calls.created++;
      const files = new Map<string, Uint8Array>();
      const box: Sandbox = {
        id: sandboxId ?? `box-${calls.created}`,
        async execute(command) {
          calls.executed.push(command);
          return { output: `ran ${command}`, exitCode: 0, truncated: false };
        },
        async uploadFiles(list) {
          for (const f of list) files.set(f.path, f.content);
          return list.map((f) => ({ path: f.path, error: null }));
        },
        async downloadFiles(paths) {
          return paths.map((path) => ({
            path,
            content: files.get(path) ?? null,
            error: files.has(path) ? null : "file_not_found" as const,
          }));
        },
        async delete() {
          files.clear();
        },
        async close() {
          calls.closed++;
        },
      };
      return box;
    },
  },
});

const driver = new PluginDriver([...builtinPlugins, counting]);
let model: ModelServer;
let dir: string;
let host: Host | null = null;

before(async () => {
  model = await startModelServer();
  dir = mkdtempSync(join(tmpdir(), "agentcli-sandbox-close-"));
  writeFileSync(join(dir, ".env"), `OPENAI_API_KEY=k\nOPENAI_BASE_URL=${model.openaiBaseUrl}\n`);
});

after(async () => {
  await host?.close();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function bundle(agentsMd: string) {
  writeFileSync(
    join(dir, "agent.toml"),
    '[agent]\nname = "closer"\nmodel = "openai:gpt-test"\n\n[sandbox]\nprovider = "counting"\n',
  );
  writeFileSync(join(dir, "AGENTS.md"), agentsMd);
  const loaded = await loadProject(join(dir, "agent.toml"), { driver, env: {}, requireEnv: false, cwd: dir });
  return { bundle: await readBundle((await buildBundle(loaded, { driver, version: "test" })).bytes), env: loaded.env };
}

async function execute(client: Client, threadId: string, command: string): Promise<void> {
  model.script({ toolCalls: [{ name: "execute", args: { command } }] }, { text: "done" });
  const state = await client.runs.wait(threadId, "agent", {
    input: { messages: [{ role: "user", content: "run it" }] },
  }) as { messages: Array<{ content: unknown }> };
  assert.equal(state.messages.at(-1)?.content, "done");
  assert.equal(calls.executed.at(-1), command, "the command ran in the plugin's sandbox");
}

test("reloads never close a sandbox; shutdown closes each open one once", async () => {
  const first = await bundle("v1\n");
  host = await hostBundle({
    bundle: first.bundle,
    driver,
    env: first.env,
    mode: "dev",
    dataDir: join(dir, "data"),
    port: 0,
    host: "127.0.0.1",
    log: silentLog,
    sandboxDir: join(dir, "sandboxes"),
  });
  const client = new Client({ apiUrl: `http://127.0.0.1:${host.listening.port}`, callerOptions: { maxRetries: 0 } });
  const thread = await client.threads.create();

  await execute(client, thread.thread_id, "echo one");
  assert.equal(calls.created, 1);

  for (const text of ["v2\n", "v3\n"]) {
    const next = await bundle(text);
    await host.reload(next.bundle, next.env);
    await execute(client, thread.thread_id, `echo ${text.trim()}`);
  }
  assert.equal(calls.closed, 0, "a reload closes no sandbox");
  assert.equal(calls.created, 1, "the thread keeps its sandbox across reloads");

  await host.close();
  host = null;
  assert.equal(calls.closed, 1, "shutdown closes the open sandbox once");
});
