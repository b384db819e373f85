/**
 * `agentcli dev` from the sources in a copy of a LangGraph.js project (a folder holding
 * langgraph.json and no agent.toml: dev finds it without --config), on a free loopback port.
 * The copy links this checkout's node_modules, as `npm install` would give the project its own.
 */
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentcliDevCommand, type DevProcess, startDevProcess } from "../fixtures/dev-process.ts";
import { SERVING } from "../_spawn-serving.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;

export interface LangGraphDev extends Omit<DevProcess, "child"> {
  dir: string;
}

/** Copies `source` (absolute) to a temporary folder and starts `agentcli dev` there; waits for `/info` unless `expectExit`. */
export async function startLangGraphDev(
  source: string,
  opts: { env?: Record<string, string>; expectExit?: boolean } = {},
): Promise<LangGraphDev> {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-langgraph-"));
  cpSync(source, dir, { recursive: true, filter: (p) => !p.includes("/node_modules") && !p.includes("/.agentcli") });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  // /ok answers as soon as dev listens; /info once the project's graphs are served.
  const dev = await startDevProcess({
    argv: (port) => agentcliDevCommand(port, ["--allow-blocking"]),
    serving: opts.expectExit ? undefined : SERVING.dev,
    cwd: dir,
    env: { ...process.env, ...opts.env, BROWSER: "none" },
    ready: opts.expectExit ? null : "/info",
    onStop: () => rmSync(dir, { recursive: true, force: true }),
  });
  return { ...dev, dir };
}
