/**
 * The `Host` allow-list and the connection bounds reach the servers the CLI starts: `agentcli
 * dev` refuses a rebinding-style request (`Host: evil.example:<port>`) with a 403 naming
 * AGENTCLI_ALLOWED_HOSTS and serves loopback names and the names its project's `.env` lists;
 * `agentcli serve` on a loopback bind serves the names the environment lists; `agentcli
 * platform serve` on a loopback bind refuses other names; a bad value of either variable stops
 * the start with a clear error, no stack trace. (tests/server/allowed-hosts.test.ts and
 * client-connections.test.ts cover the rules in process.)
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
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
  work = mkdtempSync(join(tmpdir(), "agentcli-hosts-"));
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

/** Starts the CLI with `args` and waits until `path` answers (any status); stops it with `stop()`. */
async function start(args: string[], env: Record<string, string>, path = "/ok"): Promise<{ port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  let out = "";
  const proc = spawn(process.execPath, [CLI, ...args, "--port", String(port)], { cwd: project, env: baseEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  running.push(proc);
  proc.stdout!.on("data", (d: Buffer) => (out += d));
  proc.stderr!.on("data", (d: Buffer) => (out += d));
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`exited ${proc.exitCode} before it served:\n${out}`);
    try {
      await fetch(`http://127.0.0.1:${port}${path}`);
      break;
    } catch { /* not listening yet */ }
    await sleep(200);
  }
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    await exited;
  };
  return { port, stop };
}

/** `method path` with this Host header; resolves to the status and body. */
function send(port: number, host: string, method = "POST", path = "/threads"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers: { host, "content-type": "application/json" } }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

test("dev refuses a rebinding-style Host before the API runs, and serves loopback names and those its .env lists", async () => {
  writeFileSync(join(project, ".env"), "AGENTCLI_ALLOWED_HOSTS=.dev.test\n");
  try {
    const dev = await start(["dev"], {});
    const refused = await send(dev.port, `evil.example:${dev.port}`);
    assert.equal(refused.status, 403);
    assert.match(refused.body, /Cannot serve a request for host \\"evil\.example:\d+\\".*AGENTCLI_ALLOWED_HOSTS/);
    assert.equal((await send(dev.port, `localhost:${dev.port}`)).status, 200);
    assert.equal((await send(dev.port, `[::1]:${dev.port}`)).status, 200);
    assert.equal((await send(dev.port, `api.dev.test:${dev.port}`)).status, 200, "the name the project's .env lists");
    assert.equal((await send(dev.port, `evil.example:${dev.port}`, "GET", "/ok")).status, 403, "even /ok is refused to a rebound name");
    await dev.stop();
  } finally {
    rmSync(join(project, ".env"), { force: true });
  }
});

test("serve on a loopback bind serves the names AGENTCLI_ALLOWED_HOSTS lists and refuses others", async () => {
  const deploy = spawnSync(process.execPath, [CLI, "deploy", "--dry-run"], { cwd: project, env: baseEnv({}), encoding: "utf8" });
  assert.equal(deploy.status, 0, deploy.stderr);
  const serve = await start(["serve", join(project, ".agentcli/bundle.tgz"), "--data-dir", join(work, "data")], { PLATFORM_API_KEY: "hosts-test-key", AGENTCLI_ALLOWED_HOSTS: "agents.example.com" });
  assert.equal((await send(serve.port, "agents.example.com")).status, 200);
  assert.equal((await send(serve.port, `127.0.0.1:${serve.port}`)).status, 200);
  assert.equal((await send(serve.port, "evil.example")).status, 403);
  await serve.stop();
});

test("platform serve on a loopback bind refuses other names", async () => {
  const platform = await start(["platform", "serve", "--data-dir", join(work, "platform")], {}, "/v2/deployments");
  assert.equal((await send(platform.port, "evil.example", "GET", "/v2/deployments")).status, 403);
  assert.equal((await send(platform.port, `localhost:${platform.port}`, "GET", "/v2/deployments")).status, 401);
  await platform.stop();
});

for (const [name, value, message] of [
  ["AGENTCLI_ALLOWED_HOSTS", "https://agents.example.com", /AGENTCLI_ALLOWED_HOSTS has "https:\/\/agents\.example\.com", which is not a host name/],
  ["AGENTCLI_MAX_CONNECTIONS_PER_CLIENT", "lots", /AGENTCLI_MAX_CONNECTIONS_PER_CLIENT="lots" is not a whole number/],
] as const) {
  test(`dev: an invalid ${name} stops it at start, naming the variable`, () => {
    const res = spawnSync(process.execPath, [CLI, "dev", "--port", "0"], { cwd: project, env: baseEnv({ [name]: value }), encoding: "utf8" });
    assert.notEqual(res.status, 0, res.stdout + res.stderr);
    assert.match(res.stderr, message);
    assert.doesNotMatch(res.stderr, /\n\s+at /, "no stack trace");
  });
}
