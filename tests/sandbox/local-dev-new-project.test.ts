/**
 * `agentcli dev --sandbox local` on a new project, with no setting, runs `execute` (issue 30
 * item 5): as root the server made `.agentcli/` 0700 and then refused it because "nobody",
 * who runs the commands, could not enter it. Also a project under a directory closed to other
 * users (like /root): as root its sandboxes then live under /var/lib/agentcli/sandboxes.
 * local-regular-user.test.ts runs this file again as a regular user.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Client } from "@langchain/langgraph-sdk";
import { type ModelServer, startModelServer } from "../../core/testing/model-server/server.ts";
import { sandboxRoot } from "../../plugins/sandbox/local.ts";
import { CLI } from "../toolchain/_project.ts";
import { SERVING, spawnServing } from "../_spawn-serving.ts";

const root = mkdtempSync(join(tmpdir(), "agentcli-dev-new-project-"));
const cleanups: Array<() => Promise<void> | void> = [() => rmSync(root, { recursive: true, force: true })];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function newProject(parent: string): string {
  const dir = join(parent, "project");
  mkdirSync(join(dir, "skills"), { recursive: true });
  writeFileSync(
    join(dir, "agent.toml"),
    '[agent]\nname = "fresh"\nmodel = "openai:gpt-test"\n\n[sandbox]\nprovider = "sandbox_a"\n',
  );
  writeFileSync(join(dir, "AGENTS.md"), "Run commands.\n");
  return dir;
}

async function dev(dir: string, model: ModelServer): Promise<{ client: Client; output: () => string }> {
  const proc = await spawnServing({
    serving: SERVING.dev,
    start: (port) =>
      spawn(process.execPath, [CLI, "dev", "--sandbox", "local", "--port", String(port)], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          NO_COLOR: "1",
          OPENAI_API_KEY: "test-key",
          OPENAI_BASE_URL: model.openaiBaseUrl,
        },
        stdio: ["ignore", "pipe", "pipe"],
      }),
  });
  cleanups.push(() => proc.stop());
  return { client: new Client({ apiUrl: proc.url, callerOptions: { maxRetries: 0 } }), output: proc.output };
}

async function executeOnce(client: Client, model: ModelServer, command: string): Promise<string> {
  model.script({ toolCalls: [{ name: "execute", args: { command } }] }, { text: "done" });
  const thread = await client.threads.create();
  const state =
    (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "go" }] } })) as {
      messages?: Array<{ type: string; content: unknown }>;
    };
  const tool = (state.messages ?? []).find((m) => m.type === "tool");
  assert.ok(tool, `a tool result: ${JSON.stringify(state.messages)}`);
  return String(tool.content);
}

test("dev --sandbox local on a new project: execute works with no setting", async () => {
  const model = await startModelServer();
  cleanups.push(() => model.close());
  const open = join(root, "open");
  mkdirSync(open, { mode: 0o755 });
  chmodSync(root, 0o755);
  const dir = newProject(open);
  const { client } = await dev(dir, model);
  const out = await executeOnce(client, model, "echo hello from $(id -u) > note.txt; cat note.txt");
  assert.match(out, /hello from \d+/);
  assert.match(out, /\[Command succeeded with exit code 0\]/);
  assert.ok(existsSync(join(dir, ".agentcli", "sandboxes")), "the sandboxes are in the project's .agentcli/");
  assert.equal(
    statSync(join(dir, ".agentcli")).mode & 0o777,
    0o711,
    ".agentcli/ can be entered, not listed, by other users",
  );
});

test("dev --sandbox local on a new project under a directory others cannot enter (like /root)", async () => {
  const model = await startModelServer();
  cleanups.push(() => model.close());
  const closed = join(root, "closed");
  mkdirSync(closed, { mode: 0o700 });
  const dir = newProject(closed);
  const stateDir = join(dir, ".agentcli", "sandboxes");
  cleanups.push(() => rmSync(sandboxRoot(stateDir), { recursive: true, force: true }));
  const { client } = await dev(dir, model);
  const out = await executeOnce(client, model, "echo kept > note.txt; cat note.txt");
  assert.match(out, /kept/);
  assert.match(out, /\[Command succeeded with exit code 0\]/);
});
