/**
 * `agentcli dev` from the sources in a copy of a LangGraph.js project (a folder holding
 * langgraph.json and no agent.toml: dev finds it without --config), on a free loopback port.
 * The copy links this checkout's node_modules, as `npm install` would give the project its own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../plugins/compute/revision-process.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;

export interface LangGraphDev {
  url: string;
  dir: string;
  output(): string;
  /** Resolves with the exit code when the process ends on its own. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Copies `source` (absolute) to a temporary folder and starts `agentcli dev` there; waits for `/ok` unless `expectExit`. */
export async function startLangGraphDev(
  source: string,
  opts: { env?: Record<string, string>; expectExit?: boolean } = {},
): Promise<LangGraphDev> {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-langgraph-"));
  cpSync(source, dir, { recursive: true, filter: (p) => !p.includes("/node_modules") && !p.includes("/.agentcli") });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const port = await freePort("127.0.0.1");
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    process.execPath,
    [join(ROOT, "bin/main.ts"), "dev", "--port", String(port), "--allow-blocking"],
    { cwd: dir, env: { ...process.env, ...opts.env, BROWSER: "none" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const dev = { url, dir, output: () => output, exited, stop };
  if (opts.expectExit) return dev;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) break;
    // /ok answers as soon as dev listens; /info once the project's graphs are served.
    if (await fetch(`${url}/info`).then((r) => r.ok, () => false)) return dev;
    await new Promise((r) => setTimeout(r, 200));
  }
  await stop();
  throw new Error(`agentcli dev did not start: ${output}`);
}
