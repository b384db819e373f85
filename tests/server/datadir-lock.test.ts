/**
 * One process per embedded database folder: a second server (in this process or another) on
 * the same data directory is refused with a user error naming the folder and the holder's
 * pid; once the holder closes, or dies, the folder opens again.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { buildBundle, readBundle } from "../../core/bundle/bundle.ts";
import { hostBundle } from "../../core/server/host/agent-host.ts";
import { loadProject } from "../../core/config/load.ts";
import { AgentcliError } from "../../core/kernel/errors.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { silentLog } from "../../core/kernel/log.ts";
import { DataDirLockedError } from "../../core/storage/lock.ts";
import { openStorage } from "../../core/storage/storage.ts";
import { builtinPlugins } from "../../plugins/registry.ts";

const CHILD = new URL("./_crash-child.ts", import.meta.url).pathname;
const PROJECT = new URL("../fixtures/projects/memory/", import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), "agentcli-lock-"));
after(() => rmSync(root, { recursive: true, force: true }));

function assertLocked(err: unknown, dir: string, pid: number): true {
  assert.ok(err instanceof AgentcliError, `expected a user error, got ${String(err)}`);
  assert.ok(err instanceof DataDirLockedError);
  assert.equal(err.code, "CONFLICT");
  assert.ok(err.message.includes(`"${dir}"`), err.message);
  assert.ok(err.message.includes(`pid ${pid}`), err.message);
  assert.match(err.hint ?? "", new RegExp(`pid ${pid}`));
  return true;
}

/** A server in another process on `dataDir` (the crash test's child), listening. */
async function childServer(dataDir: string): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [CHILD, dataDir], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let errOut = "";
  proc.stderr!.on("data", (b: Buffer) => (errOut += b.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once("exit", (code) => reject(new Error(`child exited (${code}): ${errOut}`)));
  });
  return { proc, url: `http://127.0.0.1:${port}` };
}

describe("embedded data directory lock", () => {
  test("a second open in this process is refused; after the first closes it opens", async () => {
    const dir = join(root, "same-process");
    const first = await openStorage({ dataDir: dir });
    await assert.rejects(openStorage({ dataDir: dir }), (err) => assertLocked(err, dir, process.pid));
    await first.threads.create({ thread_id: "00000000-0000-4000-8000-000000000001", metadata: {} });
    await first.close();
    assert.equal(existsSync(`${dir}.lock`), false, "closing releases the lock");
    const second = await openStorage({ dataDir: dir });
    try {
      assert.ok(
        await second.threads.get("00000000-0000-4000-8000-000000000001"),
        "the data written by the first is there",
      );
    } finally {
      await second.close();
    }
  });

  test("a lock left by a process that is gone is taken over", async () => {
    const dir = join(root, "stale");
    const dead = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    const pid = dead.pid!;
    await new Promise((r) => dead.once("exit", r));
    writeFileSync(`${dir}.lock`, String(pid));
    const storage = await openStorage({ dataDir: dir });
    await storage.close();
  });

  test("another process serving the folder: refused, naming its pid; after it is killed the folder opens", async () => {
    const dir = join(root, "other-process");
    const { proc, url } = await childServer(dir);
    try {
      const client = new Client({ apiUrl: url });
      const thread = await client.threads.create();
      await assert.rejects(openStorage({ dataDir: dir }), (err) => assertLocked(err, dir, proc.pid!));
      // A crash (no cleanup) leaves the lock file behind: its owner is gone, so it is stale.
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGKILL");
      await exited;
      assert.ok(existsSync(`${dir}.lock`));
      const storage = await openStorage({ dataDir: dir });
      try {
        assert.ok(await storage.threads.get(thread.thread_id), "the thread created through the other server is kept");
      } finally {
        await storage.close();
      }
    } finally {
      proc.kill("SIGKILL");
    }
  });

  test("two hostBundle servers on one data dir: the second refuses; after the first closes a new one opens", async () => {
    const dataDir = join(root, "host");
    const driver = new PluginDriver([...builtinPlugins]);
    const project = await loadProject(join(PROJECT, "agent.toml"), {
      driver,
      env: { OPENAI_API_KEY: "test-key", PLATFORM_API_KEY: "test-platform-key" },
      requireEnv: false,
      cwd: PROJECT,
    });
    const bundle = await readBundle((await buildBundle(project, { driver, version: "test" })).bytes);
    const open = (mode: "dev" | "serve") =>
      hostBundle({ bundle, driver, env: project.env, mode, dataDir, port: 0, host: "127.0.0.1", log: silentLog });
    const first = await open("serve");
    try {
      await assert.rejects(
        open("serve"),
        (err) => assertLocked(err, dataDir, process.pid) && /--data-dir/.test((err as AgentcliError).hint!),
      );
      // dev has no --data-dir: its hint says to use or stop the other server.
      await assert.rejects(
        open("dev"),
        (err) => assertLocked(err, dataDir, process.pid) && /agentcli dev/.test((err as AgentcliError).hint!),
      );
      const res = await fetch(`http://127.0.0.1:${first.listening.port}/ok`);
      assert.equal(res.status, 200, "the first server still serves");
    } finally {
      await first.close();
    }
    const again = await open("serve");
    await again.close();
  });
});
