/**
 * CORS settings reach the servers the CLI starts, from the process environment: `agentcli dev`
 * answers preflights of loopback origins and of those `CORS_ALLOW_ORIGINS` lists, `agentcli
 * serve` only of the listed ones; an invalid value stops either at start with a clear error
 * naming the variable, and no stack trace. (tests/server/cors.test.ts covers the rules
 * themselves in process.)
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

import { join } from "node:path";
import { test } from "node:test";
import { CLI, launchKit } from "./_launch.ts";

const kit = launchKit("agentcli-cors-");

async function preflight(url: string, origin: string): Promise<Response> {
  return await fetch(`${url}/threads`, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type",
    },
  });
}

async function assertAllowed(url: string, origin: string, allowed: boolean): Promise<void> {
  const res = await preflight(url, origin);
  assert.equal(res.status, allowed ? 204 : 403, `${origin}: ${res.status}`);
  assert.equal(res.headers.get("access-control-allow-origin"), allowed ? origin : null, origin);
}

test("dev: loopback origins and the listed ones are allowed, others refused", async () => {
  const dev = await kit.start(["dev"], { CORS_ALLOW_ORIGINS: "https://app.example" });
  await assertAllowed(dev.url, "http://localhost:5173", true);
  await assertAllowed(dev.url, "https://app.example", true);
  await assertAllowed(dev.url, "https://evil.example", false);
  await dev.stop();
});

test("serve: only the listed origins, not loopback ones", async () => {
  const serve = await kit.startServe({
    PLATFORM_API_KEY: "cors-test-key",
    CORS_ALLOW_ORIGINS: "https://app.example",
  });
  await assertAllowed(serve.url, "https://app.example", true);
  await assertAllowed(serve.url, "http://localhost:5173", false);
  // The actual request from an allowed origin carries the header too (the example's identity provider is anonymous).
  const res = await fetch(`${serve.url}/threads`, {
    method: "POST",
    headers: { Origin: "https://app.example", "Content-Type": "application/json" },
    body: "{}",
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
  await serve.stop();
});

for (const cmd of ["dev", "serve"]) {
  test(`${cmd}: an invalid CORS_ALLOW_ORIGINS stops it at start, naming the variable`, () => {
    const args = cmd === "dev"
      ? ["dev"]
      : ["serve", join(kit.project, ".agentcli/bundle.tgz"), "--data-dir", join(kit.work, "data-bad")];
    const res = spawnSync(process.execPath, [CLI, ...args, "--port", "0"], {
      cwd: kit.project,
      env: kit.env({ PLATFORM_API_KEY: "k", CORS_ALLOW_ORIGINS: "app.example" }),
      encoding: "utf8",
    });
    assert.notEqual(res.status, 0, res.stdout + res.stderr);
    assert.match(res.stderr, /CORS_ALLOW_ORIGINS has "app\.example", which is not an origin/);
    assert.doesNotMatch(res.stderr, /\n\s+at /, "no stack trace");
  });
}
