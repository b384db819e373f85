/**
 * Crash safety: a server process is SIGKILLed mid-run; a new one on the same data directory
 * still has every acknowledged thread, run and completed result, and the interrupted run is
 * not stuck (it ends `error`, the thread accepts new runs).
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { spawnServer, stopProcess } from "./_harness.ts";

const CHILD = new URL("./_crash-child.ts", import.meta.url).pathname;

const start = (dataDir: string) => spawnServer(CHILD, [dataDir]);
const kill = stopProcess;

test("SIGKILL mid-run loses nothing acknowledged and leaves no run stuck", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-crash-"));
  let proc: ChildProcess | undefined;
  try {
    const first = await start(dir);
    proc = first.proc;
    const th = await first.client.threads.create({ metadata: { kept: "yes" } });
    const done = await first.client.runs.wait(th.thread_id, "slow", { input: { ms: 1 } });
    assert.equal((done as { steps: number }).steps, 1);
    await first.client.store.putItem(["mem"], "k", { v: 1 });
    const running = await first.client.runs.create(th.thread_id, "slow", {
      input: { ms: 60_000 },
      streamMode: "custom",
    });
    for await (const e of first.client.runs.joinStream(th.thread_id, running.run_id)) if (e.event === "custom") break;
    await kill(proc, "SIGKILL");

    const second = await start(dir);
    proc = second.proc;
    const c = second.client;
    const thread = await c.threads.get(th.thread_id);
    assert.equal(thread.metadata?.kept, "yes");
    const runs = await c.runs.list(th.thread_id);
    assert.equal(runs.length, 2);
    const crashed = runs.find((r) => r.run_id === running.run_id)!;
    assert.equal(crashed.status, "error");
    assert.equal(runs.find((r) => r.run_id !== running.run_id)!.status, "success");
    assert.deepEqual((await c.store.getItem(["mem"], "k"))?.value, { v: 1 });
    const replay = [];
    for await (const e of c.runs.joinStream(th.thread_id, running.run_id)) replay.push(e.event);
    assert.equal(replay[0], "metadata");
    assert.equal(replay.at(-1), "error", "the interrupted run's stream ends with an error event, not a silent close");
    const again = (await c.runs.wait(th.thread_id, "slow", { input: { ms: 1 } })) as { steps: number };
    assert.equal(again.steps, 2);
    await kill(proc, "SIGTERM");
  } finally {
    if (proc) await kill(proc, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
