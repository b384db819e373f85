/**
 * Connections are bounded per client address as well as in total: one client holding many
 * idle sockets gets a 503 for those beyond its share, and `/ok` keeps answering another
 * client (127.0.0.2, which Linux routes to lo); silent sockets are dropped after the header
 * timeout. Addresses are counted as IPv4, IPv4-mapped IPv6 as IPv4, other IPv6 per /64.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { after, before, test } from "node:test";
import { type AgentServer, createAgentServer } from "../../core/server/app.ts";
import { clientKey } from "../../core/server/host/client-connections.ts";
import { listenSettings } from "../../core/server/host/listen-settings.ts";
import { listen } from "../../core/server/host/node.ts";
import { FIXTURES } from "./_harness.ts";

const lines: string[] = [];
const log = { info: () => {}, warn: (m: string) => lines.push(m), error: () => {} };
let server: AgentServer;
before(async () => {
  server = await createAgentServer({ graphs: FIXTURES, log });
});
after(async () => {
  await server?.close({ graceMs: 100 });
});

/** An idle socket from 127.0.0.1 that sends nothing; resolves once connected, with what it was told. */
function idle(port: number): Promise<{ socket: Socket; answer: () => string; closed: Promise<void> }> {
  return new Promise((resolve) => {
    let answer = "";
    const socket = connect(
      { port, host: "127.0.0.1", localAddress: "127.0.0.1" },
      () => resolve({ socket, answer: () => answer, closed }),
    );
    const closed = new Promise<void>((r) => socket.on("close", () => r()));
    socket.on("data", (d) => (answer += d));
    socket.on("error", () => {});
  });
}

/** GET /ok from 127.0.0.2. */
function okFromOtherClient(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      path: "/ok",
      localAddress: "127.0.0.2",
      agent: false,
      timeout: 5000,
    }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(new Error("no answer to /ok")));
    req.on("error", reject);
    req.end();
  });
}

test("one client holding idle sockets cannot make /ok fail for another client", async () => {
  const open = await listen(server, {
    port: 0,
    host: "127.0.0.1",
    log,
    maxConnections: 20,
    maxConnectionsPerClient: 5,
  });
  try {
    const socks = await Promise.all(Array.from({ length: 30 }, () => idle(open.port)));
    assert.equal(await okFromOtherClient(open.port), 200, "/ok answers another client");
    // The 25 beyond the client's 5 are told 503 and closed; the 5 stay open.
    const closed: typeof socks = [];
    await new Promise<void>((r) => socks.forEach((s) => void s.closed.then(() => closed.push(s) === 25 && r())));
    const refused = socks.filter((s) => /^HTTP\/1\.1 503/.test(s.answer()));
    assert.equal(refused.length, 25, "the sockets beyond the client's 5 were told 503");
    assert.match(refused[0]!.answer(), /AGENTCLI_MAX_CONNECTIONS_PER_CLIENT/);
    assert.ok(lines.some((l) => /AGENTCLI_MAX_CONNECTIONS_PER_CLIENT/.test(l)), "the refusal is logged (rate-limited)");
    for (const s of socks) s.socket.destroy();
  } finally {
    await open.close();
  }
});

test("a client's slots come back when its sockets close", async () => {
  const open = await listen(server, { port: 0, host: "127.0.0.1", log, maxConnectionsPerClient: 2 });
  try {
    const socks = await Promise.all([idle(open.port), idle(open.port)]);
    const third = await idle(open.port);
    await third.closed;
    assert.match(third.answer(), /^HTTP\/1\.1 503/);
    for (const s of socks) s.socket.destroy();
    await Promise.all(socks.map((s) => s.closed));
    assert.equal((await fetch(`http://127.0.0.1:${open.port}/ok`)).status, 200);
  } finally {
    await open.close();
  }
});

test("sockets that never send a request are dropped after the header timeout", async () => {
  const open = await listen(server, { port: 0, host: "127.0.0.1", log, timeouts: { headersMs: 300 } });
  try {
    const silent = await idle(open.port);
    await silent.closed;
    assert.ok(silent.socket.destroyed);
  } finally {
    await open.close();
  }
});

test("client addresses: IPv4-mapped as IPv4, IPv6 per /64", () => {
  assert.equal(clientKey("127.0.0.1"), "127.0.0.1");
  assert.equal(clientKey("::ffff:10.0.0.1"), "10.0.0.1");
  assert.equal(clientKey("2001:db8:0:1::5"), "2001:db8:0:1::/64");
  assert.equal(clientKey("2001:db8:0:1:ffff:1:2:3"), "2001:db8:0:1::/64");
  assert.equal(clientKey("::1"), "0:0:0:0::/64");
});

test("AGENTCLI_MAX_CONNECTIONS_PER_CLIENT: default 128, 0 for no bound, a bad value names the variable", () => {
  assert.equal(listenSettings({}, { mode: "serve", bind: "127.0.0.1" }).maxConnectionsPerClient, 128);
  assert.equal(
    listenSettings({ AGENTCLI_MAX_CONNECTIONS_PER_CLIENT: "0" }, { mode: "serve", bind: "127.0.0.1" })
      .maxConnectionsPerClient,
    0,
  );
  assert.equal(listenSettings({}, { mode: "serve", bind: "127.0.0.1" }).maxConnections, 1000);
  for (const bad of ["-1", "many", "1.5"]) {
    assert.throws(
      () => listenSettings({ AGENTCLI_MAX_CONNECTIONS_PER_CLIENT: bad }, { mode: "serve", bind: "127.0.0.1" }),
      /AGENTCLI_MAX_CONNECTIONS_PER_CLIENT=".*" is not a whole number/,
    );
  }
  assert.throws(
    () => listenSettings({ AGENTCLI_MAX_CONNECTIONS: "0" }, { mode: "serve", bind: "127.0.0.1" }),
    /AGENTCLI_MAX_CONNECTIONS="0" is not a positive whole number/,
  );
});
