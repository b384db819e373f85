/**
 * SIGTERM or SIGINT to the process a user started stops `agentcli dev` and releases its data
 * in every launch mode: `npx agentcli dev` (npm passes the signal on to its child, which the
 * repository's `.npmrc` makes agentcli itself, not a shell), `node bin/agentcli.js dev` and the executable
 * (`dist/agentcli`, after `npm run build`). Each is killed by its pid and started again on the
 * same project and data.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const EXE = join(ROOT, "dist/agentcli");

const MODES: Record<string, string[]> = {
  "npx agentcli dev": ["npx", "agentcli"],
  "node bin/agentcli.js dev": [process.execPath, join(ROOT, "bin/agentcli.js")],
  "dist/agentcli dev": [EXE],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `<cmd> dev` on the project, once it says it serves and an API request (it waits for storage: the data is open and locked after it) answers. */
async function start(cmd: string[], project: string): Promise<Serving> {
  // npx resolves the project's own bin from the repository (its cwd); Node 22 first on PATH.
  const dev = await spawnServing({
    serving: SERVING.dev,
    start: (port) =>
      spawn(cmd[0]!, [...cmd.slice(1), "dev", "--config", join(project, "agent.toml"), "--port", String(port)], {
        cwd: ROOT,
        env: {
          PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
          HOME: process.env.HOME ?? "/tmp",
          NO_COLOR: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      }),
  });
  const res = await fetch(`${dev.url}/assistants/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(res.status, 200, dev.output());
  return dev;
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });

for (const [mode, cmd] of Object.entries(MODES)) {
  test(`${mode}: SIGTERM and SIGINT to its pid stop the server and release the data`, {
    skip: cmd[0] === EXE && !existsSync(EXE) ? "dist/agentcli is not built (npm run build)" : false,
  }, async () => {
    const project = mkdtempSync(join(tmpdir(), "agentcli-signals-"));
    cpSync(join(ROOT, "examples/research"), project, {
      recursive: true,
      filter: (p) => !p.includes("/.agentcli") && !p.endsWith("/.env"),
    });
    try {
      for (const signal of ["SIGTERM", "SIGINT", null] as const) {
        const dev = await start(cmd, project);
        const { child: proc, output, port } = dev;
        try {
          if (!signal) break; // the third start, on the same data, served: the lock was released
          proc.kill(signal);
          await dev.exited;
          // Whatever npm started must be gone too: nothing serves the port any more.
          for (let i = 0; i < 100 && (await portOpen(port)); i++) await sleep(200);
          assert.equal(
            await portOpen(port),
            false,
            `${mode}: the server still listens after ${signal} to pid ${proc.pid}:\n${output()}`,
          );
        } finally {
          await dev.stop();
          for (let i = 0; i < 100 && (await portOpen(port)); i++) await sleep(200);
        }
      }
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
}
