/**
 * Robust serving: slow clients (slowloris: headers or a body that never finish) are dropped
 * after the header/request timeouts and cost a few rate-limited log lines, never a stack
 * trace each, while `/ok` keeps answering; connections beyond the limit are refused; `serve`
 * listens on 127.0.0.1 unless `--host` says otherwise.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { connect, type Socket } from "node:net";
import { after, before, test } from "node:test";
import { type AgentServer, createAgentServer } from "../../core/server/app.ts";
import { listen, type Listening } from "../../core/server/host/node.ts";
import { FIXTURES } from "./_harness.ts";

const lines: string[] = [];
const log = {
  info: (m: string) => lines.push(m),
  warn: (m: string) => lines.push(m),
  error: (m: string, e?: unknown) => lines.push(`${m} ${e instanceof Error ? e.stack : e ?? ""}`),
};
let server: AgentServer;
let open: Listening;
before(async () => {
  server = await createAgentServer({ graphs: FIXTURES, log });
  open = await listen(server, { port: 0, host: "127.0.0.1", timeouts: { headersMs: 400, requestMs: 800 }, log });
});
after(async () => {
  await open?.close();
  await server?.close({ graceMs: 100 });
});

function slowClient(port: number, first: string): Promise<{ answer: string; closed: boolean }> {
  return new Promise((resolve) => {
    const sock: Socket = connect(port, "127.0.0.1", () => sock.write(first));
    let answer = "";
    sock.on("data", (d) => (answer += d.toString("latin1")));
    sock.on("error", () => {});
    sock.on("close", () => resolve({ answer, closed: true }));
    setTimeout(() => {
      sock.destroy();
      resolve({ answer, closed: false });
    }, 8000);
  });
}

async function ok(port: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/ok`)).status;
}

test("slow headers and slow bodies are dropped with one rate-limited line, no stack traces; /ok keeps answering", async () => {
  const clients = [
    ...Array.from({ length: 25 }, () => slowClient(open.port, "POST /threads HTTP/1.1\r\nHost: x\r\nX-Slow: ")),
    ...Array.from(
      { length: 25 },
      () =>
        slowClient(
          open.port,
          'POST /threads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"metadata":',
        ),
    ),
  ];
  assert.equal(await ok(open.port), 200, "/ok answers while the slow clients hang on");
  const results = await Promise.all(clients);
  assert.ok(results.every((r) => r.closed), "every slow client was dropped");
  assert.ok(results.some((r) => /^HTTP\/1\.1 40[08]/.test(r.answer)), "they were told why (408/400)");
  assert.equal(await ok(open.port), 200);
  assert.ok(
    lines.length >= 1 && lines.length <= 4,
    `${lines.length} log lines for 50 slow clients:\n${lines.join("\n")}`,
  );
  for (const l of lines) {
    assert.doesNotMatch(l, /\n\s+at /, "no stack trace");
    assert.match(l, /client error|the client went away/);
  }
});

test("connections beyond the limit are refused; the server serves again once they close", async () => {
  const limited = await listen(server, { port: 0, host: "127.0.0.1", maxConnections: 3, log });
  try {
    const socks = await Promise.all(Array.from({ length: 3 }, () =>
      new Promise<Socket>((r) => {
        const s = connect(limited.port, "127.0.0.1", () => r(s));
        s.on("error", () => {});
      })));
    await assert.rejects(fetch(`http://127.0.0.1:${limited.port}/ok`, { signal: AbortSignal.timeout(5000) }));
    for (const s of socks) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await ok(limited.port), 200);
  } finally {
    await limited.close();
  }
});

test("serve listens on 127.0.0.1 unless --host says otherwise", () => {
  const help = execFileSync(process.execPath, ["bin/agentcli.js", "serve", "--help"], { encoding: "utf8" });
  assert.match(help, /--host <addr>.*127\.0\.0\.1/);
});
