/**
 * Crash safety: a server process is SIGKILLed mid-run; a new one on the same data directory
 * still has every acknowledged thread, run and completed result, and the interrupted run is
 * not stuck (it ends `error`, the thread accepts new runs).
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";

const CHILD = new URL("./_crash-child.ts", import.meta.url).pathname;

function start(dataDir: string): Promise<{ proc: ChildProcess; client: Client }> {
  const proc = spawn(process.execPath, [CHILD, dataDir], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ proc, client: new Client({ apiUrl: `http://127.0.0.1:${m[1]}`, apiKey: null, callerOptions: { maxRetries: 0 } }) });
    });
    proc.once("exit", (code) => reject(new Error(`server exited early (${code})`)));
  });
}

function kill(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once("exit", () => resolve());
    proc.kill(signal);
  });
}

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
    const running = await first.client.runs.create(th.thread_id, "slow", { input: { ms: 60_000 }, streamMode: "custom" });
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
    const again = (await c.runs.wait(th.thread_id, "slow", { input: { ms: 1 } })) as { steps: number };
    assert.equal(again.steps, 2);
    await kill(proc, "SIGTERM");
  } finally {
    if (proc) await kill(proc, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
