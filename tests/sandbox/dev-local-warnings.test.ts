/**
 * `agentcli dev` warns only about what fails the way it runs (issue 31, item 5): with
 * `[sandbox] provider = "sandbox_a"` and no SANDBOX_A_API_KEY, plain `dev` warns that runs will
 * fail; `dev --sandbox local` (bubblewrap replaces the provider) does not, and a run's
 * `execute` then succeeds in the local sandbox. Driven as a process with the LangGraph SDK and
 * the scripted model server.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { SERVING, spawnServing } from "../_spawn-serving.ts";
import { makeProject, removeProject } from "../toolchain/_project.ts";
import { type ModelServer, startModelServer } from "../fixtures/model-server/server.ts";

const CLI = new URL("../../bin/agentcli.js", import.meta.url).pathname;
let model: ModelServer;
let dir: string;
let boxes: string;
before(async () => {
  model = await startModelServer();
  dir = makeProject({
    "agent.toml": '[agent]\nname = "boxed"\nmodel = "openai:gpt-5"\n\n[sandbox]\nprovider = "sandbox_a"\n',
    ".env": "",
  });
  // Tests run as root, so sandboxes run as "nobody", who must be able to enter their directory.
  boxes = mkdtempSync(join(tmpdir(), "agentcli-dev-boxes-"));
  chmodSync(boxes, 0o711);
});
after(async () => {
  await model?.close();
  if (dir) removeProject(dir);
  if (boxes) rmSync(boxes, { recursive: true, force: true });
});

/** Starts dev with `args`, waits for it to serve, runs `body`, stops it; returns everything it printed. */
async function withDev(args: string[], body: (url: string) => Promise<void>): Promise<string> {
  const dev = await spawnServing({
    serving: SERVING.dev,
    start: (port) =>
      spawn(process.execPath, [CLI, "dev", "--port", String(port), "--allow-blocking", ...args], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          OPENAI_API_KEY: "test-key",
          OPENAI_BASE_URL: model.openaiBaseUrl,
          AGENTCLI_SANDBOX_DIR: boxes,
        },
        stdio: ["ignore", "pipe", "pipe"],
      }),
  });
  try {
    await body(dev.url);
  } finally {
    await dev.stop("SIGINT");
  }
  return dev.output();
}

test("plain dev: the missing provider key is a warning that runs will fail", async () => {
  const out = await withDev([], async () => {});
  assert.match(out, /warning: SANDBOX_A_API_KEY is not set \(for sandbox provider "sandbox_a"\): runs will fail/);
});

test("dev --sandbox local: no missing-key warning, and a run's execute succeeds", async () => {
  const out = await withDev(["--sandbox", "local"], async (url) => {
    model.script({ toolCalls: [{ name: "execute", args: { command: "echo made-in-$((6*7))" } }] }, { text: "done" });
    const client = new Client({ apiUrl: url });
    const thread = await client.threads.create();
    const state = (await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "run it" }] },
    })) as { messages: Array<{ type: string; content: unknown }> };
    const tool = state.messages.find((m) => m.type === "tool");
    assert.match(String(tool?.content), /made-in-42/, JSON.stringify(state.messages));
  });
  assert.doesNotMatch(out, /warning: .*SANDBOX_A_API_KEY/, out);
  assert.doesNotMatch(out, /runs will fail/, out);
  assert.match(
    out,
    /--sandbox local runs the sandboxes: SANDBOX_A_API_KEY \(for sandbox provider "sandbox_a"\) is not needed by dev \(deploy refuses without it\)/,
  );
});
