/**
 * A port another process holds: `agentcli dev` says so (PortInUse) and exits, and the tests'
 * `spawnServing` (tests/_spawn-serving.ts) starts it again on another port and returns once the
 * child itself says it serves that one; `agentcli router`'s listener reports the same error.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { CanarySplit } from "../../core/server/router/canary-split.ts";
import { startCanaryRouter } from "../../core/server/router/router.ts";
import { PORT_TAKEN, SERVING, spawnServing } from "../_spawn-serving.ts";

const CLI = new URL("../../bin/agentcli.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "agentcli-port-taken-"));
let blocker: Server;
let held = 0;
before(async () => {
  writeFileSync(join(dir, "agent.toml"), `[agent]\nname = "taken"\n\n[auth]\nprovider = "anonymous"\n`);
  writeFileSync(join(dir, "AGENTS.md"), "Test agent.\n");
  blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  held = (blocker.address() as AddressInfo).port;
});
after(async () => {
  await new Promise((r) => blocker.close(r));
  rmSync(dir, { recursive: true, force: true });
});

test("dev on a held port says so and exits; spawnServing starts it again on another, once it says it serves", async () => {
  const ports: number[] = [];
  const outputs: Array<() => string> = [];
  const dev = await spawnServing({
    serving: SERVING.dev,
    start: (port) => {
      // The first start gets the held port, as if another process took it after it was picked.
      const given = ports.length === 0 ? held : port;
      ports.push(given);
      const child = spawn(process.execPath, [CLI, "dev", "--port", String(given)], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d));
      child.stderr.on("data", (d: Buffer) => (out += d));
      outputs.push(() => out);
      return child;
    },
  });
  try {
    assert.equal(ports.length, 2, dev.output());
    assert.equal(ports[0], held);
    assert.match(outputs[0]!(), PORT_TAKEN);
    assert.equal(dev.port, ports[1]);
    assert.notEqual(dev.port, held);
    assert.match(dev.output(), SERVING.dev);
    assert.equal((await fetch(`${dev.url}/ok`)).status, 200);
  } finally {
    await dev.stop();
  }
});

test("the canary router on a held port: PortInUse, not Node's EADDRINUSE", async () => {
  const split = new CanarySplit({
    percent: 50,
    record: { threads: {} as never, deploymentId: "d", revisionId: "r" },
  });
  await assert.rejects(
    startCanaryRouter({
      serving: "http://127.0.0.1:1",
      canary: "http://127.0.0.1:2",
      split,
      host: "127.0.0.1",
      port: held,
    }),
    (err: Error) => PORT_TAKEN.test(err.message) && err.message.includes(`127.0.0.1:${held}`),
  );
});
