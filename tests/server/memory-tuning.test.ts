/**
 * The server's memory settings (bin/agentcli.js `execTunedServer`, core/kernel/runtime.ts
 * `preferBaselineWasm`, core/engine/queue/idle-gc.ts): `agentcli dev` starts again in place with
 * glibc's and V8's settings, its runs (and so its tools' child processes) see the environment
 * the user gave, `AGENTCLI_MEMORY_TUNING=0` turns all of it off, and the idle collector runs a
 * forced full collection only once runs have stopped.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";
import { idleCollector } from "../../core/engine/queue/idle-gc.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const EXE = join(ROOT, "dist/agentcli");

async function startDev(
  env: Record<string, string>,
  cmd: string[] = [process.execPath, join(ROOT, "bin/agentcli.js")],
): Promise<{ dev: Serving; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-memtune-"));
  writeFileSync(join(dir, "agent.toml"), `[agent]\nname = "memtune"\n\n[auth]\nprovider = "anonymous"\n`);
  writeFileSync(join(dir, "AGENTS.md"), "Test agent.\n");
  const dev = await spawnServing({
    serving: SERVING.dev,
    start: (port) =>
      spawn(cmd[0]!, [
        ...cmd.slice(1),
        "dev",
        "--config",
        join(dir, "agent.toml"),
        "--port",
        String(port),
        "--graph",
        `env=${join(ROOT, "tests/fixtures/graphs/env.ts")}`,
      ], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      }),
  }).catch((err) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  return { dev, url: dev.url, dir };
}

async function stop(s: { dev: Serving; dir: string }): Promise<void> {
  await s.dev.stop();
  rmSync(s.dir, { recursive: true, force: true });
}

async function runEnvGraph(url: string): Promise<string> {
  const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
  const [assistant] = await client.assistants.search({ graphId: "env" });
  const thread = await client.threads.create();
  const out = await client.runs.wait(thread.thread_id, assistant!.assistant_id, {
    input: { messages: [{ role: "user", content: "env?" }] },
  }) as { messages: Array<{ content: string }> };
  return out.messages.at(-1)!.content;
}

test(
  "dev starts again in place with the allocator and young-generation settings; its runs see the user's environment",
  { skip: process.platform !== "linux" ? "Linux only" : false },
  async () => {
    const s = await startDev({});
    try {
      // Same pid (the spawned one), new image: its command line and start-time environment carry the settings.
      const cmdline = readFileSync(`/proc/${s.dev.child.pid}/cmdline`, "utf8").split("\0");
      assert.ok(cmdline.includes("--max-semi-space-size=8"), `cmdline: ${cmdline.join(" ")}`);
      assert.ok(cmdline.includes("--no-memory-reducer"), `cmdline: ${cmdline.join(" ")}`);
      const environ = readFileSync(`/proc/${s.dev.child.pid}/environ`, "utf8").split("\0");
      assert.ok(environ.includes("MALLOC_ARENA_MAX=2"), "MALLOC_ARENA_MAX=2 at start");
      assert.ok(environ.includes("MALLOC_MMAP_THRESHOLD_=131072"), "MALLOC_MMAP_THRESHOLD_ at start");
      assert.equal(
        await runEnvGraph(s.url),
        "MALLOC_ARENA_MAX=- MALLOC_MMAP_THRESHOLD_=- AGENTCLI_MEMORY_TUNED=- AGENTCLI_MEMORY_TUNED_EXE=- NODE_OPTIONS=-",
      );
    } finally {
      await stop(s);
    }
  },
);

test("a value the user set is kept and passed on; AGENTCLI_MEMORY_TUNING=0 turns the start in place off", {
  skip: process.platform !== "linux" ? "Linux only" : false,
}, async () => {
  const own = await startDev({ MALLOC_ARENA_MAX: "4" });
  try {
    const environ = readFileSync(`/proc/${own.dev.child.pid}/environ`, "utf8").split("\0");
    assert.ok(environ.includes("MALLOC_ARENA_MAX=4"));
    assert.equal(
      await runEnvGraph(own.url),
      "MALLOC_ARENA_MAX=4 MALLOC_MMAP_THRESHOLD_=- AGENTCLI_MEMORY_TUNED=- AGENTCLI_MEMORY_TUNED_EXE=- NODE_OPTIONS=-",
    );
  } finally {
    await stop(own);
  }
  const off = await startDev({ AGENTCLI_MEMORY_TUNING: "0" });
  try {
    const cmdline = readFileSync(`/proc/${off.dev.child.pid}/cmdline`, "utf8").split("\0");
    assert.ok(!cmdline.some((a) => a.startsWith("--max-semi-space-size")), `cmdline: ${cmdline.join(" ")}`);
    assert.ok(!cmdline.includes("--no-memory-reducer"), `cmdline: ${cmdline.join(" ")}`);
    assert.equal(
      await runEnvGraph(off.url),
      "MALLOC_ARENA_MAX=- MALLOC_MMAP_THRESHOLD_=- AGENTCLI_MEMORY_TUNED=- AGENTCLI_MEMORY_TUNED_EXE=- NODE_OPTIONS=-",
    );
  } finally {
    await stop(off);
  }
});

test(
  "the executable (dist/agentcli) starts dev again in place with the allocator settings (not V8's flag: its code cache would be refused); its runs see the user's environment",
  {
    skip: process.platform !== "linux"
      ? "Linux only"
      : !existsSync(EXE)
      ? "dist/agentcli is not built (npm run build)"
      : false,
  },
  async () => {
    const s = await startDev({ NODE_OPTIONS: "--no-warnings" }, [EXE]);
    try {
      const environ = readFileSync(`/proc/${s.dev.child.pid}/environ`, "utf8").split("\0");
      assert.ok(environ.includes("MALLOC_ARENA_MAX=2"), "MALLOC_ARENA_MAX=2 at start");
      assert.ok(environ.includes("MALLOC_MMAP_THRESHOLD_=131072"), "MALLOC_MMAP_THRESHOLD_ at start");
      assert.ok(environ.includes("NODE_OPTIONS=--no-warnings"), "NODE_OPTIONS as given");
      assert.equal(
        await runEnvGraph(s.url),
        "MALLOC_ARENA_MAX=- MALLOC_MMAP_THRESHOLD_=- AGENTCLI_MEMORY_TUNED=- AGENTCLI_MEMORY_TUNED_EXE=- NODE_OPTIONS=--no-warnings",
      );
    } finally {
      await stop(s);
    }
  },
);

test("the idle collector collects after the quiet time, not while work runs; thorough at most once per interval, and only after runs", async () => {
  const calls: boolean[] = [];
  const idle = await idleCollector({
    env: {},
    delayMs: 30,
    thoroughIntervalMs: 60_000,
    collect: (thorough) => calls.push(thorough),
  });
  idle.idle(); // the start: nothing ran yet
  await sleep(150);
  assert.deepEqual(calls, [false]);
  idle.busy();
  idle.idle();
  await sleep(150);
  assert.deepEqual(calls, [false, true], "runs ended: a thorough collection");
  idle.busy();
  idle.idle();
  idle.busy(); // work started within the quiet time
  await sleep(150);
  assert.deepEqual(calls, [false, true], "none while work runs");
  idle.idle();
  await sleep(150);
  assert.deepEqual(calls, [false, true, false], "a regular one within the thorough interval");
  idle.idle();
  idle.close();
  await sleep(150);
  assert.deepEqual(calls, [false, true, false], "none after close");
  const off = await idleCollector({
    env: { AGENTCLI_MEMORY_TUNING: "0" },
    delayMs: 10,
    collect: (thorough) => calls.push(thorough),
  });
  off.busy();
  off.idle();
  await sleep(100);
  assert.equal(calls.length, 3, "none when turned off");
});

test("the idle collector's collection is V8's full one: an old object only a WeakRef holds is gone after it", async () => {
  let target: object | null = { big: new Array(1000).fill("x") };
  const ref = new WeakRef(target);
  await sleep(0); // out of the job that made the WeakRef (which keeps its target alive until then)
  target = null;
  const idle = await idleCollector({ env: {}, delayMs: 10 });
  idle.idle();
  await sleep(200);
  assert.equal(ref.deref(), undefined);
});
