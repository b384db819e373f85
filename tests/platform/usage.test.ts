/**
 * The control plane shows a deployment's usage: `GET /v2/deployments/{id}/usage` asks the
 * deployed agent's own `GET /usage` with its PLATFORM_API_KEY (a real revision process of
 * the local listener) and answers what it reports; without a key it says how to fix it.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { openPlatform, type Platform } from "../../core/platform/server.ts";
import { createApiKey, createTenant } from "../../core/platform/store/tenancy.ts";
import { loadPlugins } from "../../core/kernel/plugins.ts";
import { builtinPlugins } from "../../plugins/registry.ts";
import { deployBundle, makeBundle, revisionSettled } from "./_harness.ts";

let dataDir = "";
let platform: Platform;
let key = "";

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await platform.app.request(path, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const HELD_SERVE = fileURLToPath(new URL("./_held-serve.ts", import.meta.url));

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "agentcli-platform-usage-"));
  platform = await openPlatform({
    dataDir,
    mode: "cloud",
    onError: () => {},
    driver: await loadPlugins(builtinPlugins),
    localCommand: [process.execPath, ...process.execArgv, HELD_SERVE],
  });
  const tenant = await createTenant(platform.sql, "usage");
  key = (await createApiKey(platform.sql, { tenantId: tenant.id, userId: "alice" })).key;
});
after(async () => {
  await platform?.close();
  await rm(dataDir, { recursive: true, force: true });
});

test("a deployment's usage, read by the control plane from the deployment as its owner", async () => {
  const c = await call("POST", "/v2/deployments", { name: "usage-1", source: "internal_source" });
  const id = c.body.id;
  const early = await call("GET", `/v2/deployments/${id}/usage`);
  assert.equal(early.status, 409);
  assert.match(early.body.detail ?? JSON.stringify(early.body), /has no URL yet/);
  const bundle = await makeBundle({ name: "usage-agent" });
  const revisionId = await deployBundle(platform.app, key, id, bundle, {
    secrets: [{ name: "PLATFORM_API_KEY", value: "agent-key" }],
  });
  const rev = await revisionSettled(platform.app, key, id, revisionId, { attempts: 1800 });
  assert.equal(rev.status, "DEPLOYED", rev.status_message);
  const usage = await call("GET", `/v2/deployments/${id}/usage?group_by=model`);
  assert.equal(usage.status, 200, JSON.stringify(usage.body));
  assert.equal(usage.body.group_by, "model");
  assert.equal(usage.body.recording, true);
  assert.equal(usage.body.user, null, "the owner reads everyone's");
  assert.deepEqual(usage.body.rows, []);
  const bad = await call("GET", `/v2/deployments/${id}/usage?group_by=planet`);
  assert.equal(bad.status, 422, "the deployment's own refusal comes through");

  // The same through the CLI, against the listening control plane.
  const { url: base } = await platform.listen({ port: 0, host: "127.0.0.1" });
  const table = await usageCli(["usage-1", "--group-by", "model", "--platform-url", base], key);
  assert.equal(table.code, 0, table.out);
  assert.match(table.out, /^model\s+calls\s+input\s+output\s+total\s+cost$/m);
  assert.match(table.out, /^total\s+0\s+0\s+0\s+0\s+-$/m);
  const json = await usageCli(["usage-1", "--json", "--platform-url", base], key);
  assert.equal(json.code, 0, json.out);
  assert.equal(JSON.parse(json.out).group_by, "day");
  const unknown = await usageCli(["nobody", "--platform-url", base], key);
  assert.equal(unknown.code, 1, unknown.out);
  assert.match(unknown.out, /Cannot read its usage: "nobody" has no deployment on/);
  const keyless = await usageCli(["usage-1", "--platform-url", base], "");
  assert.equal(keyless.code, 1, keyless.out);
  assert.match(keyless.out, /PLATFORM_API_KEY is not set/);
});

const CLI = fileURLToPath(new URL("../../bin/agentcli.js", import.meta.url));

/** Runs `agentcli platform usage <args>` with `PLATFORM_API_KEY` set to `apiKey` (none when empty). */
function usageCli(args: string[], apiKey: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "platform", "usage", ...args], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ...(apiKey ? { PLATFORM_API_KEY: apiKey } : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code, out }));
  });
}
