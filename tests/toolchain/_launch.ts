/**
 * Servers the CLI starts, as a user's shell would: a copy of the example project in a
 * temporary folder (no `.env`, no `.agentcli/`), `agentcli <args> --port <free>` with a minimal
 * environment, waited for until it answers, and every one stopped with SIGTERM after the file.
 *
 * @example
 * const kit = launchKit("agentcli-cors-");
 * const dev = await kit.start(["dev"], { CORS_ALLOW_ORIGINS: "https://app.example" });
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { freePort } from "../../plugins/compute/revision-process.ts";

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
  const running: ChildProcess[] = [];
  const kit = {
    work: "",
    project: "",
    /** The environment a command gets: PATH, HOME in the work folder, no colour, and `extra`. */
    env(extra: Record<string, string>): Record<string, string> {
      return { PATH: process.env.PATH ?? "", HOME: kit.work, NO_COLOR: "1", ...extra };
    },
    /** Starts `agentcli <args> --port <free>` in the project and waits until `path` answers (any status). */
    async start(args: string[], env: Record<string, string>, path = "/ok"): Promise<Launched> {
      const port = await freePort("127.0.0.1");
      let out = "";
      const proc = spawn(process.execPath, [CLI, ...args, "--port", String(port)], {
        cwd: kit.project,
        env: kit.env(env),
        stdio: ["ignore", "pipe", "pipe"],
      });
      running.push(proc);
      proc.stdout!.on("data", (d: Buffer) => (out += d));
      proc.stderr!.on("data", (d: Buffer) => (out += d));
      const url = `http://127.0.0.1:${port}`;
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`exited ${proc.exitCode} before it served:\n${out}`);
        try {
          await fetch(`${url}${path}`);
          break;
        } catch { /* not listening yet */ }
        await new Promise((r) => setTimeout(r, 200));
      }
      return { port, url, out: () => out, stop: () => stopProcess(proc) };
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
    for (const p of running) await stopProcess(p);
    rmSync(kit.work, { recursive: true, force: true });
  });
  return kit;
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  await exited;
}
