/**
 * A revision of the `local` compute whose port another process took between its pick and the
 * revision's bind: the revision says so and starts on another port, and it is healthy only
 * once it says it serves its own port: an impostor answering `/ok` 200 on the port it was
 * given is not its health (plugins/compute/revision-process.ts). Restarted after a crash, a
 * revision whose port was taken meanwhile moves to another, and the deployment's proxy follows.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { selfInvocation } from "../../core/kernel/index.ts";
import { RevisionProxy } from "../../plugins/compute/local-proxy.ts";
import { freePort, RevisionProcess } from "../../plugins/compute/revision-process.ts";
import { makeBundle } from "./_harness.ts";

test("a revision whose port was taken starts on another; an impostor's /ok is not its health", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agentcli-revision-port-"));
  // Another process holds the first port handed out, and answers `/ok` there as a revision would.
  const impostor = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((r) => impostor.listen(0, "127.0.0.1", r));
  const taken = (impostor.address() as { port: number }).port;
  const lines: string[] = [];
  const picked: number[] = [];
  await writeFile(
    join(dir, "bundle.tgz"),
    await makeBundle({
      agentToml: `[agent]\nname = "port-taken"\nmodel = "openai:gpt-5"\n\n[auth]\nprovider = "anonymous"\n`,
    }),
  );
  const p = new RevisionProcess({
    revisionId: "rev-port",
    bundlePath: join(dir, "bundle.tgz"),
    dataDir: join(dir, "data"),
    host: "127.0.0.1",
    // A secret whose value is part of the URL: serve's banner shows it `[redacted]`.
    env: { PATH: process.env.PATH ?? "", HOME: dir, LOOKUP_API_KEY: "http://127.0.0.1" },
    log: (line) => lines.push(line),
    command: selfInvocation(),
    pickPort: async (host) => {
      picked.push(picked.length ? await freePort(host) : taken);
      return picked.at(-1)!;
    },
  });
  try {
    await p.start();
    assert.equal(picked[0], taken);
    assert.equal(picked.length, 2, lines.join("\n"));
    assert.equal(p.port, picked[1]);
    assert.ok(lines.some((l) => /Cannot listen on 127\.0\.0\.1:\d+: the port is in use/.test(l)), lines.join("\n"));
    assert.ok(lines.some((l) => l.includes(`port ${taken} was taken before the revision bound it`)));
    assert.ok(lines.some((l) => /serving "port-taken" on \[redacted\]/.test(l)), lines.join("\n"));
    // What answers on the revision's port is the revision (the impostor has no /info).
    const info = await fetch(`http://${p.address}/info`);
    assert.equal(info.status, 200);
    assert.ok(((await info.json()) as { version?: unknown }).version !== undefined);
  } finally {
    await p.stop();
    impostor.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("a revision restarted after a crash whose port was taken meanwhile moves to another; the proxy follows", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agentcli-revision-moved-"));
  await writeFile(
    join(dir, "bundle.tgz"),
    await makeBundle({
      agentToml: `[agent]\nname = "moved"\nmodel = "openai:gpt-5"\n\n[auth]\nprovider = "anonymous"\n`,
    }),
  );
  const lines: string[] = [];
  const proxy = new RevisionProxy({ maxConnectionsPerClient: 0 });
  const proxyPort = await proxy.listen(0, "127.0.0.1");
  let moved: [string, string] | null = null;
  const p = new RevisionProcess({
    revisionId: "rev-moved",
    bundlePath: join(dir, "bundle.tgz"),
    dataDir: join(dir, "data"),
    host: "127.0.0.1",
    env: { PATH: process.env.PATH ?? "", HOME: dir },
    log: (line) => lines.push(line),
    command: selfInvocation(),
    onMoved: (from, to) => {
      moved = [from, to];
      proxy.retarget(from, to);
    },
  });
  const impostor = createServer((_req, res) => res.end("impostor"));
  try {
    await p.start();
    proxy.switchTo(p.address);
    const first = p.address;
    const port = p.port;
    process.kill(p.pid!, "SIGKILL");
    // Another process takes the port as soon as the crashed revision lets it go.
    for (;;) {
      const bound = await new Promise<boolean>((r) => {
        impostor.once("error", () => r(false));
        impostor.listen(port, "127.0.0.1", () => r(true));
      });
      if (bound) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    for (let i = 0; i < 600 && !moved; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(moved, lines.join("\n"));
    assert.deepEqual(moved, [first, p.address]);
    assert.notEqual(p.port, port);
    assert.ok(
      lines.some((l) => l.includes(`port ${port} was taken meanwhile; restarting on ${p.port}`)),
      lines.join("\n"),
    );
    assert.equal(proxy.current, p.address);
    // Through the proxy: the revision (the impostor has no /info).
    const info = await fetch(`http://127.0.0.1:${proxyPort}/info`);
    assert.equal(info.status, 200);
    assert.ok(((await info.json()) as { version?: unknown }).version !== undefined);
  } finally {
    await p.stop();
    await proxy.close();
    impostor.close();
    await rm(dir, { recursive: true, force: true });
  }
});
