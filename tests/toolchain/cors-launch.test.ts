/**
 * CORS settings reach the servers the CLI starts, from the process environment: `agentcli dev`
 * answers preflights of loopback origins and of those `CORS_ALLOW_ORIGINS` lists, `agentcli
 * serve` only of the listed ones; an invalid value stops either at start with a clear error
 * naming the variable, and no stack trace. (tests/server/cors.test.ts covers the rules
 * themselves in process.)
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { freePort } from "../../core/platform/compute/revision-process.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CLI = join(ROOT, "bin/agentcli.js");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let work = "";
let project = "";
const running: ChildProcess[] = [];

before(() => {
  work = mkdtempSync(join(tmpdir(), "agentcli-cors-"));
  project = join(work, "project");
  cpSync(join(ROOT, "examples/research"), project, { recursive: true, filter: (src) => !src.includes(".agentcli") && !src.endsWith(".env") });
});
after(async () => {
  for (const p of running) {
    if (p.exitCode !== null || p.signalCode !== null) continue;
    const exited = new Promise((r) => p.once("exit", r));
    p.kill("SIGTERM");
    await exited;
  }
  rmSync(work, { recursive: true, force: true });
});

const baseEnv = (extra: Record<string, string>) => ({ PATH: process.env.PATH ?? "", HOME: work, NO_COLOR: "1", ...extra });

/** Starts the CLI with `args` and waits for `/ok`; the output so far is in `out()`. */
async function start(args: string[], env: Record<string, string>): Promise<{ url: string; out: () => string; stop: () => Promise<void> }> {
  const port = await freePort();
  let out = "";
  const proc = spawn(process.execPath, [CLI, ...args, "--port", String(port)], { cwd: project, env: baseEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  running.push(proc);
  proc.stdout!.on("data", (d: Buffer) => (out += d));
  proc.stderr!.on("data", (d: Buffer) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`exited ${proc.exitCode} before it served:\n${out}`);
    try {
      if ((await fetch(`${url}/ok`)).ok) break;
    } catch { /* not listening yet */ }
    await sleep(200);
  }
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    await exited;
  };
  return { url, out: () => out, stop };
}

async function preflight(url: string, origin: string): Promise<Response> {
  return await fetch(`${url}/threads`, {
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" },
  });
}

async function assertAllowed(url: string, origin: string, allowed: boolean): Promise<void> {
  const res = await preflight(url, origin);
  assert.equal(res.status, allowed ? 204 : 403, `${origin}: ${res.status}`);
  assert.equal(res.headers.get("access-control-allow-origin"), allowed ? origin : null, origin);
}

test("dev: loopback origins and the listed ones are allowed, others refused", async () => {
  const dev = await start(["dev"], { CORS_ALLOW_ORIGINS: "https://app.example" });
  await assertAllowed(dev.url, "http://localhost:5173", true);
  await assertAllowed(dev.url, "https://app.example", true);
  await assertAllowed(dev.url, "https://evil.example", false);
  await dev.stop();
});

test("serve: only the listed origins, not loopback ones", async () => {
  const deploy = spawnSync(process.execPath, [CLI, "deploy", "--dry-run"], { cwd: project, env: baseEnv({}), encoding: "utf8" });
  assert.equal(deploy.status, 0, deploy.stderr);
  const serve = await start(["serve", join(project, ".agentcli/bundle.tgz"), "--data-dir", join(work, "data")], {
    PLATFORM_API_KEY: "cors-test-key",
    CORS_ALLOW_ORIGINS: "https://app.example",
  });
  await assertAllowed(serve.url, "https://app.example", true);
  await assertAllowed(serve.url, "http://localhost:5173", false);
  // The actual request from an allowed origin carries the header too (the example's identity provider is anonymous).
  const res = await fetch(`${serve.url}/threads`, { method: "POST", headers: { Origin: "https://app.example", "Content-Type": "application/json" }, body: "{}" });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
  await serve.stop();
});

for (const cmd of ["dev", "serve"]) {
  test(`${cmd}: an invalid CORS_ALLOW_ORIGINS stops it at start, naming the variable`, () => {
    const args = cmd === "dev" ? ["dev"] : ["serve", join(project, ".agentcli/bundle.tgz"), "--data-dir", join(work, "data-bad")];
    const res = spawnSync(process.execPath, [CLI, ...args, "--port", "0"], { cwd: project, env: baseEnv({ PLATFORM_API_KEY: "k", CORS_ALLOW_ORIGINS: "app.example" }), encoding: "utf8" });
    assert.notEqual(res.status, 0, res.stdout + res.stderr);
    assert.match(res.stderr, /CORS_ALLOW_ORIGINS has "app\.example", which is not an origin/);
    assert.doesNotMatch(res.stderr, /\n\s+at /, "no stack trace");
  });
}
