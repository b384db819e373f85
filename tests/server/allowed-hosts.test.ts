/**
 * The `Host` allow-list against DNS rebinding (core/server/host/allowed-hosts.ts), over real HTTP:
 * a request for a name the server does not serve is refused with a 403 naming
 * AGENTCLI_ALLOWED_HOSTS before any route runs; loopback names and addresses (with and
 * without port, IPv6 included) and the listed names are served; a non-loopback bind of
 * `serve` serves any name unless a list is given; WebSocket upgrades are checked the same way.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { allowedHostsFromEnv, defaultAllowedHosts, hostAllowed } from "../../core/server/host/allowed-hosts.ts";
import { type AgentServer, createAgentServer } from "../../core/server/app.ts";
import { listen, type Listening } from "../../core/server/host/node.ts";
import { FIXTURES } from "./_harness.ts";

const log = { info: () => {}, warn: () => {}, error: () => {} };
let server: AgentServer;
let strict: Listening;
before(async () => {
  server = await createAgentServer({ graphs: FIXTURES, log });
  strict = await listen(server, { port: 0, host: "127.0.0.1", log });
});
after(async () => {
  await strict?.close();
  await server?.close({ graceMs: 100 });
});

/** POST /threads with this Host header; resolves to the status and body. */
function post(port: number, host: string, path = "/threads"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      path,
      method: "POST",
      headers: { host, "content-type": "application/json" },
    }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end("{}");
  });
}

test("a rebinding-style Host is refused with a 403 naming the setting, before the route runs", async () => {
  const before = (await (await fetch(`http://127.0.0.1:${strict.port}/threads/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  })).json()) as unknown[];
  for (
    const host of [
      `evil.example:${strict.port}`,
      "evil.example",
      "localhost.evil.example",
      "127.0.0.1.nip.io",
      "evil.example.",
    ]
  ) {
    const res = await post(strict.port, host);
    assert.equal(res.status, 403, host);
    const detail = (JSON.parse(res.body) as { detail: string }).detail;
    assert.match(detail, /AGENTCLI_ALLOWED_HOSTS/);
    assert.match(detail, /Cannot serve a request for host/);
  }
  const after = (await (await fetch(`http://127.0.0.1:${strict.port}/threads/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  })).json()) as unknown[];
  assert.equal(after.length, before.length, "no thread was created by a refused request");
});

test("loopback names and addresses are served, with and without port", async () => {
  const p = strict.port;
  for (
    const host of [
      `127.0.0.1:${p}`,
      "127.0.0.1",
      `127.3.2.1:${p}`,
      `localhost:${p}`,
      "localhost",
      "LOCALHOST",
      `app.localhost:${p}`,
      `[::1]:${p}`,
      "[::1]",
      "localhost.",
    ]
  ) {
    assert.equal((await post(p, host)).status, 200, host);
  }
});

test("the names listed in AGENTCLI_ALLOWED_HOSTS are served: exact names, .domain for a domain and its subdomains, * for any", async () => {
  const hosts = allowedHostsFromEnv({ AGENTCLI_ALLOWED_HOSTS: "agent.example.com, .corp.test" }, {
    mode: "dev",
    bind: "127.0.0.1",
  });
  const listed = await listen(server, { port: 0, host: "127.0.0.1", log, allowedHosts: hosts });
  try {
    for (
      const [host, status] of [
        ["agent.example.com", 200],
        [`agent.example.com:${listed.port}`, 200],
        ["corp.test", 200],
        ["a.b.corp.test:443", 200],
        ["evil.example.com", 403],
        ["notcorp.test", 403],
        [`localhost:${listed.port}`, 200],
      ] as const
    ) {
      assert.equal((await post(listed.port, host)).status, status, host);
    }
    listed.allowHosts(allowedHostsFromEnv({ AGENTCLI_ALLOWED_HOSTS: "*" }, { mode: "dev", bind: "127.0.0.1" }));
    assert.equal((await post(listed.port, "evil.example")).status, 200, "* allows any name");
  } finally {
    await listed.close();
  }
  assert.equal(
    hostAllowed(
      allowedHostsFromEnv({ AGENTCLI_ALLOWED_HOSTS: "true" }, { mode: "dev", bind: "127.0.0.1" }),
      "x.example",
    ),
    true,
  );
});

test("defaults: dev refuses other names on any bind; serve and the control plane only on a loopback bind", () => {
  for (const bind of ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"]) {
    for (const mode of ["dev", "serve", "platform"] as const) {
      assert.equal(hostAllowed(defaultAllowedHosts({ mode, bind }), "evil.example"), false, `${mode} on ${bind}`);
    }
  }
  for (const bind of ["0.0.0.0", "::", "10.1.2.3"]) {
    assert.equal(hostAllowed(defaultAllowedHosts({ mode: "dev", bind }), "evil.example"), false, `dev on ${bind}`);
    assert.equal(
      hostAllowed(defaultAllowedHosts({ mode: "dev", bind }), "10.1.2.3:2024"),
      true,
      "an IP address cannot be rebound",
    );
    assert.equal(
      hostAllowed(defaultAllowedHosts({ mode: "serve", bind }), "agents.example.com"),
      true,
      `serve on ${bind}`,
    );
    assert.equal(
      hostAllowed(defaultAllowedHosts({ mode: "platform", bind }), "cp.example.com"),
      true,
      `platform on ${bind}`,
    );
  }
  const listedOnAnyBind = allowedHostsFromEnv({ AGENTCLI_ALLOWED_HOSTS: "agents.example.com" }, {
    mode: "serve",
    bind: "0.0.0.0",
  });
  assert.equal(hostAllowed(listedOnAnyBind, "evil.example"), false, "a list applies on any bind");
  assert.equal(hostAllowed(listedOnAnyBind, "10.0.0.7:8000"), true, "probes at the pod IP keep working");
});

test("serve on a non-loopback bind answers any name by default (load balancers, pod IPs)", async () => {
  const open = await listen(server, { port: 0, host: "0.0.0.0", log });
  try {
    assert.equal((await post(open.port, "agents.example.com")).status, 200);
  } finally {
    await open.close();
  }
});

test("a value that is not a host name is a start-up error naming the variable and the fix", () => {
  for (const bad of ["https://agent.example.com", "agent.example.com:8000", "agent.example.com/x", "a b"]) {
    assert.throws(
      () => allowedHostsFromEnv({ AGENTCLI_ALLOWED_HOSTS: bad }, { mode: "serve", bind: "127.0.0.1" }),
      (err: Error & { hint?: string }) => {
        assert.match(err.message, /AGENTCLI_ALLOWED_HOSTS has ".*", which is not a host name/);
        assert.match(err.hint ?? "", /\.example\.com/);
        return true;
      },
      bad,
    );
  }
});

test("WebSocket upgrades for a refused Host get the 403 too", async () => {
  let upgraded = 0;
  const open = await listen(server, {
    port: 0,
    host: "127.0.0.1",
    log,
    upgrade: (
      _req,
      socket,
    ) => (upgraded++,
      socket.end("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")),
  });
  const ask = (host: string) =>
    new Promise<string>((resolve) => {
      const s = connect(open.port, "127.0.0.1", () =>
        s.write(`GET /ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`));
      let answer = "";
      s.on("data", (d) => (answer += d));
      s.on("error", () => {});
      s.on("close", () =>
        resolve(answer));
    });
  try {
    assert.match(await ask("evil.example"), /^HTTP\/1\.1 403[^]*AGENTCLI_ALLOWED_HOSTS/);
    assert.equal(upgraded, 0);
    assert.match(await ask(`localhost:${open.port}`), /^HTTP\/1\.1 101/);
    assert.equal(upgraded, 1);
  } finally {
    await open.close();
  }
});
