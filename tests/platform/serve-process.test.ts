/**
 * `agentcli platform serve` as a real process: a taken port is a clean user error naming
 * --port (exit 1) that creates no tenant, so the key of the default tenant is printed by the
 * first start that listens; while it runs on the embedded database, `platform admin` reports a
 * wrong action or missing flag as such and otherwise says to stop the server (or use
 * DATABASE_URL), and a second server on the same folder is refused; a revision process binds the listener's host (127.0.0.1) and exits
 * when its control plane is SIGKILLed; the control plane started again runs exactly one
 * process for the deployment; a recorded revision process whose control plane died is stopped
 * by `stopRecorded`, one whose control plane lives is left alone.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { stopRecorded } from "../../plugins/compute/revision-process.ts";
import { makeBundle, type PlatformServe, startPlatformServe, until } from "./_harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "agentcli-platform-serve-process-"));
const started: ChildProcess[] = [];
const ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" };

after(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts `agentcli platform serve`; `output` collects its stdout and stderr. */
function platformServe(
  port: number,
  dataDir: string,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [
    join(ROOT, "bin/agentcli.js"),
    "platform",
    "serve",
    "--port",
    String(port),
    "--data-dir",
    dataDir,
  ], {
    cwd: work,
    env: ENV,
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, output: () => out, exited };
}

/** Runs agentcli to its end. */
function agentcli(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(ROOT, "bin/agentcli.js"), ...args], {
    cwd: work,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  return new Promise((r) => child.on("close", (code) => r({ code, output })));
}

/** `startPlatformServe` in `work` (on `port` when given), killed after the file if still running. */
async function startInWork(dataDir: string, port?: number): Promise<PlatformServe> {
  const s = await startPlatformServe({ dataDir, port, cwd: work, env: ENV });
  started.push(s.child);
  return s;
}

/** Processes whose command line mentions `text` (Linux /proc). */
function processesWith(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").some((a) => a.includes(text))) {
        pids.push(Number(entry));
      }
    } catch { /* the process ended meanwhile */ }
  }
  return pids;
}

test("a taken port: a user error naming --port, exit 1, and no tenant created; the next start that listens prints the key; admin beside a running embedded server", async () => {
  const blocker: Server = createServer();
  const port = await new Promise<number>((r) =>
    blocker.listen(0, "127.0.0.1", () => r((blocker.address() as { port: number }).port))
  );
  try {
    const s = platformServe(port, "taken");
    assert.equal(await s.exited, 1, s.output());
    assert.match(s.output(), /Cannot listen on 127\.0\.0\.1:\d+: the port is in use/);
    assert.match(s.output(), /--port/);
    assert.doesNotMatch(s.output(), /hit a bug|acp_|Created tenant/);
  } finally {
    await new Promise((r) => blocker.close(r));
  }
  const s = await startInWork("taken");
  assert.match(
    s.output(),
    /Created tenant "default"[^\n]*\n\s+acp_[A-Za-z0-9_-]+\n/,
    "the key is shown by the first start that listens",
  );

  // While it runs on the embedded database: a wrong admin command is reported as such, a right
  // one says to stop the server (or use DATABASE_URL), and a second server is refused.
  const bogus = await agentcli(["platform", "admin", "bogus", "--data-dir", "taken"]);
  assert.equal(bogus.code, 2, "an unknown action is a usage error");
  assert.match(bogus.output, /Cannot run "agentcli platform admin bogus": unknown action/);
  const missing = await agentcli(["platform", "admin", "create-key", "--data-dir", "taken"]);
  assert.match(missing.output, /--tenant is required/);
  const locked = await agentcli(["platform", "admin", "list-tenants", "--data-dir", "taken"]);
  assert.equal(locked.code, 1);
  assert.match(locked.output, /"agentcli platform serve" \(pid \d+\) is running on it/);
  assert.match(locked.output, /Stop "agentcli platform serve".*DATABASE_URL/);
  const twice = await agentcli(["platform", "serve", "--port", "0", "--data-dir", "taken"]);
  assert.equal(twice.code, 1);
  assert.match(twice.output, /another one \(pid \d+\) is running on its embedded database/);
  assert.equal(
    (await fetch(`${s.url}/ok`)).status,
    200,
    "the refused second server left the first one alone",
  );

  s.child.kill("SIGTERM");
  assert.equal(await s.exited, 0);
  const listed = await agentcli(["platform", "admin", "list-tenants", "--data-dir", "taken"]);
  assert.equal(listed.code, 0, listed.output);
  assert.match(listed.output, / default\n/);
});

test("a revision process binds 127.0.0.1, exits when its control plane is SIGKILLed, and a restart runs exactly one", async () => {
  const dataDir = join(work, "orphans");
  const first = await startInWork(dataDir);
  const base = first.url;
  const key = first.key;
  assert.ok(key, first.output());
  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const c = await api("POST", "/v2/deployments", { name: "orphan-check", source: "internal_source" });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  const id: string = c.body.id;
  const u = await api("POST", `/v2/deployments/${id}/upload-url`);
  const put = await fetch(u.body.upload_url, {
    method: "PUT",
    body: (await makeBundle({ name: "orphan-check" })) as Uint8Array<ArrayBuffer>,
  });
  assert.equal(put.status, 200);
  const p = await api("PATCH", `/v2/deployments/${id}`, {
    source_revision_config: { source_tarball_path: u.body.object_path },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-test" }, { name: "PLATFORM_API_KEY", value: "orphan-check-key" }],
  });
  const rev = await until(
    async () => {
      const r = await api("GET", `/v2/deployments/${id}/revisions/${p.body.latest_revision_id}`);
      return ["DEPLOYED", "DEPLOY_FAILED", "BUILD_FAILED", "INTERRUPTED"].includes(r.body.status) ? r.body : null;
    },
    "the revision to end",
    1800,
  );
  assert.equal(rev.status, "DEPLOYED", rev.status_message);
  const url: string = (await api("GET", `/v2/deployments/${id}`)).body.url;
  assert.equal((await fetch(`${url}/ok`)).status, 200);

  const deploymentData = join(dataDir, "deployments", id, "data");
  const pidFile = join(dataDir, "deployments", id, "revisions", rev.id, "serve.pid");
  const recorded = JSON.parse(readFileSync(pidFile, "utf8"));
  assert.equal(recorded.parent, first.child.pid);
  assert.deepEqual(processesWith(deploymentData), [recorded.pid], "one process serves the deployment's data folder");
  const args = readFileSync(`/proc/${recorded.pid}/cmdline`, "utf8").split("\0");
  assert.equal(args[args.indexOf("--host") + 1], "127.0.0.1", "the revision binds the listener's host, not 0.0.0.0");

  first.child.kill("SIGKILL");
  await first.exited;
  await until(async () => !alive(recorded.pid), "the revision process to exit with its control plane", 600);

  // On the same port: the deployment's URL names it (no retry: a port taken meanwhile fails this).
  const second = await startInWork(dataDir, first.port);
  assert.equal((await fetch(`${url}/ok`)).status, 200, "the restarted control plane serves the deployment at its URL");
  const again = JSON.parse(readFileSync(pidFile, "utf8"));
  assert.equal(again.parent, second.child.pid);
  assert.notEqual(again.pid, recorded.pid);
  assert.deepEqual(
    processesWith(deploymentData),
    [again.pid],
    "exactly one process serves the deployment's data folder",
  );
  second.child.kill("SIGTERM");
  assert.equal(await second.exited, 0);
  await until(async () => !alive(again.pid), "the revision process to stop with the control plane", 600);
  assert.ok(!existsSync(pidFile), "a stopped revision leaves no pid file");
});

test("stopRecorded stops a recorded revision process whose control plane is gone, and leaves a live one's alone", async () => {
  const bundle = join(work, "leftover-bundle.tgz");
  const sleeper = () => {
    const c = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", bundle], { stdio: "ignore" });
    started.push(c);
    return c;
  };
  // A control plane that has exited: its pid is no longer alive.
  const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => gone.once("exit", r));
  const orphan = sleeper();
  const orphanExit = new Promise((r) => orphan.once("exit", r));
  const file = join(work, "leftover.pid");
  writeFileSync(file, JSON.stringify({ pid: orphan.pid, parent: gone.pid, bundle }));
  assert.equal(await stopRecorded(file), orphan.pid);
  await orphanExit;
  assert.ok(!existsSync(file));

  // Owned by a control plane that still runs (here: another live process): left alone.
  const owner = sleeper();
  const owned = sleeper();
  writeFileSync(file, JSON.stringify({ pid: owned.pid, parent: owner.pid, bundle }));
  assert.equal(await stopRecorded(file), null);
  assert.ok(alive(owned.pid!));
  owner.kill("SIGKILL");
  owned.kill("SIGKILL");

  // A pid now used by an unrelated process (no bundle path in its command line): not killed.
  const unrelated = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  started.push(unrelated);
  writeFileSync(file, JSON.stringify({ pid: unrelated.pid, parent: gone.pid, bundle }));
  assert.equal(await stopRecorded(file), null);
  assert.ok(alive(unrelated.pid!));
  unrelated.kill("SIGKILL");
});
