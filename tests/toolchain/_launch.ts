/**
 * Servers the CLI starts, as a user's shell would: a copy of the example project in a
 * temporary folder (no `.env`, no `.agentcli/`), `agentcli <args> --port <free>` with a minimal
 * environment, waited for until it says it serves, and every one stopped with SIGTERM after the file.
 *
 * @example
 * const kit = launchKit("agentcli-cors-");
 * const dev = await kit.start(["dev"], { CORS_ALLOW_ORIGINS: "https://app.example" });
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";

export const ROOT = new URL("../..", import.meta.url).pathname;
export const CLI = join(ROOT, "bin/agentcli.js");

/** A server the kit started. */
export interface Launched {
  port: number;
  url: string;
  /** What it printed so far (stdout and stderr). */
  out(): string;
  /** SIGTERM, then waits for it to exit (nothing if it already has). */
  stop(): Promise<void>;
}

/** The kit of one test file; registers its `before` (the project copy) and `after` (stop all, remove the folder). */
export function launchKit(prefix: string) {
  const running: Serving[] = [];
  const kit = {
    work: "",
    project: "",
    /** The environment a command gets: PATH, HOME in the work folder, no colour, and `extra`. */
    env(extra: Record<string, string>): Record<string, string> {
      return { PATH: process.env.PATH ?? "", HOME: kit.work, NO_COLOR: "1", ...extra };
    },
    /**
     * Starts `agentcli <args> --port <free>` (`dev`, `serve` or `platform serve`) in the project,
     * once it says it serves (on another port when another process took the one picked first).
     */
    async start(args: string[], env: Record<string, string>): Promise<Launched> {
      const serving = args[0] === "platform" ? SERVING.platform : args[0] === "serve" ? SERVING.serve : SERVING.dev;
      const s = await spawnServing({
        serving,
        start: (port) =>
          spawn(process.execPath, [CLI, ...args, "--port", String(port)], {
            cwd: kit.project,
            env: kit.env(env),
            stdio: ["ignore", "pipe", "pipe"],
          }),
      });
      running.push(s);
      return { port: s.port, url: s.url, out: s.output, stop: () => s.stop() };
    },
    /** Bundles the project (`deploy --dry-run`), then starts `agentcli serve` on the bundle with its own data folder. */
    async startServe(env: Record<string, string>): Promise<Launched> {
      const deploy = spawnSync(process.execPath, [CLI, "deploy", "--dry-run"], {
        cwd: kit.project,
        env: kit.env({}),
        encoding: "utf8",
      });
      assert.equal(deploy.status, 0, deploy.stderr);
      return await kit.start(
        ["serve", join(kit.project, ".agentcli/bundle.tgz"), "--data-dir", join(kit.work, "data")],
        env,
      );
    },
  };
  before(() => {
    kit.work = mkdtempSync(join(tmpdir(), prefix));
    kit.project = join(kit.work, "project");
    cpSync(join(ROOT, "examples/research"), kit.project, {
      recursive: true,
      filter: (src) => !src.includes(".agentcli") && !src.endsWith(".env"),
    });
  });
  after(async () => {
    for (const s of running) await s.stop();
    rmSync(kit.work, { recursive: true, force: true });
  });
  return kit;
}
