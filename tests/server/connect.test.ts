/**
 * `serve` with an unreachable PostgreSQL or Redis fails fast: after
 * `AGENTCLI_CONNECT_TIMEOUT_SECONDS` of retrying it exits 1 with an error that names the
 * variable and the address, never the password.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { buildBundle } from "../../core/bundle/bundle.ts";
import { loadProject } from "../../core/config/load.ts";
import { PluginDriver } from "../../core/kernel/plugin-driver.ts";
import { builtinPlugins } from "../../plugins/registry.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const PROJECT = new URL("../fixtures/projects/memory/", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "agentcli-connect-"));
const bundlePath = join(dir, "bundle.tgz");
after(() => rmSync(dir, { recursive: true, force: true }));
before(async () => {
  const driver = new PluginDriver([...builtinPlugins]);
  const project = await loadProject(join(PROJECT, "agent.toml"), {
    driver,
    env: { OPENAI_API_KEY: "test-key" },
    requireEnv: false,
    cwd: PROJECT,
  });
  writeFileSync(bundlePath, (await buildBundle(project, { driver, version: "test" })).bytes);
});

/**
 * A port no PostgreSQL or Redis answers on: this test listens there itself and drops every
 * connection, so no other process can take the port while the test runs (a port picked free
 * and left closed could be).
 */
async function deadPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

function serve(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [
    join(ROOT, "bin/agentcli.js"),
    "serve",
    bundlePath,
    "--port",
    "0",
    "--data-dir",
    join(dir, "data"),
  ], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      OPENAI_API_KEY: "test-key",
      PLATFORM_API_KEY: "test-platform-key",
      AGENTCLI_CONNECT_TIMEOUT_SECONDS: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (stderr += b.toString()));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stderr })));
}

test(
  "an unreachable PostgreSQL fails the start with the variable and address, not the password",
  { timeout: 120_000 },
  async () => {
    const { port, close } = await deadPort();
    const { code, stderr } = await serve({ DATABASE_URL: `postgres://postgres:s3cret-pw@127.0.0.1:${port}/test` })
      .finally(close);
    assert.equal(code, 1, stderr);
    assert.match(stderr, new RegExp(`Cannot connect to PostgreSQL at 127\\.0\\.0\\.1:${port}/test \\(DATABASE_URL\\)`));
    assert.match(stderr, /AGENTCLI_CONNECT_TIMEOUT_SECONDS/);
    assert.ok(!stderr.includes("s3cret-pw"), stderr);
  },
);

test("an unreachable Redis fails the start (it used to hang) with the variable and address, not the password", {
  timeout: 120_000,
}, async () => {
  const { port, close } = await deadPort();
  const { code, stderr } = await serve({ REDIS_URL: `redis://:s3cret-pw@127.0.0.1:${port}` }).finally(close);
  assert.equal(code, 1, stderr);
  assert.match(stderr, new RegExp(`Cannot connect to Redis at 127\\.0\\.0\\.1:${port} \\(REDIS_URL\\)`));
  assert.ok(!stderr.includes("s3cret-pw"), stderr);
});
