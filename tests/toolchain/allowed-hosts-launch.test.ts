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
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { CLI, launchKit } from "./_launch.ts";

const kit = launchKit("agentcli-hosts-");

/** `method path` with this Host header; resolves to the status and body. */
function send(
  port: number,
  host: string,
  method = "POST",
  path = "/threads",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      path,
      method,
      headers: { host, "content-type": "application/json" },
    }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

test("dev refuses a rebinding-style Host before the API runs, and serves loopback names and those its .env lists", async () => {
  writeFileSync(join(kit.project, ".env"), "AGENTCLI_ALLOWED_HOSTS=.dev.test\n");
  try {
    const dev = await kit.start(["dev"], {});
    const refused = await send(dev.port, `evil.example:${dev.port}`);
    assert.equal(refused.status, 403);
    assert.match(refused.body, /Cannot serve a request for host \\"evil\.example:\d+\\".*AGENTCLI_ALLOWED_HOSTS/);
    assert.equal((await send(dev.port, `localhost:${dev.port}`)).status, 200);
    assert.equal((await send(dev.port, `[::1]:${dev.port}`)).status, 200);
    assert.equal(
      (await send(dev.port, `api.dev.test:${dev.port}`)).status,
      200,
      "the name the kit.project's .env lists",
    );
    assert.equal(
      (await send(dev.port, `evil.example:${dev.port}`, "GET", "/ok")).status,
      403,
      "even /ok is refused to a rebound name",
    );
    await dev.stop();
  } finally {
    rmSync(join(kit.project, ".env"), { force: true });
  }
});

test("serve on a loopback bind serves the names AGENTCLI_ALLOWED_HOSTS lists and refuses others", async () => {
  const serve = await kit.startServe({
    PLATFORM_API_KEY: "hosts-test-key",
    AGENTCLI_ALLOWED_HOSTS: "agents.example.com",
  });
  assert.equal((await send(serve.port, "agents.example.com")).status, 200);
  assert.equal((await send(serve.port, `127.0.0.1:${serve.port}`)).status, 200);
  assert.equal((await send(serve.port, "evil.example")).status, 403);
  await serve.stop();
});

test("platform serve on a loopback bind refuses other names", async () => {
  const platform = await kit.start(["platform", "serve", "--data-dir", join(kit.work, "platform")], {});
  assert.equal((await send(platform.port, "evil.example", "GET", "/v2/deployments")).status, 403);
  assert.equal((await send(platform.port, `localhost:${platform.port}`, "GET", "/v2/deployments")).status, 401);
  await platform.stop();
});

for (
  const [name, value, message] of [
    [
      "AGENTCLI_ALLOWED_HOSTS",
      "https://agents.example.com",
      /AGENTCLI_ALLOWED_HOSTS has "https:\/\/agents\.example\.com", which is not a host name/,
    ],
    ["AGENTCLI_MAX_CONNECTIONS_PER_CLIENT", "lots", /AGENTCLI_MAX_CONNECTIONS_PER_CLIENT="lots" is not a whole number/],
  ] as const
) {
  test(`dev: an invalid ${name} stops it at start, naming the variable`, () => {
    const res = spawnSync(process.execPath, [CLI, "dev", "--port", "0"], {
      cwd: kit.project,
      env: kit.env({ [name]: value }),
      encoding: "utf8",
    });
    assert.notEqual(res.status, 0, res.stdout + res.stderr);
    assert.match(res.stderr, message);
    assert.doesNotMatch(res.stderr, /\n\s+at /, "no stack trace");
  });
}
