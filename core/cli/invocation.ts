/**
 * How to print "run agentcli again" for a user: `agentcli` when the command found on `PATH` is
 * this very agentcli, else the absolute path it was started from (a copy of `dist/agentcli`,
 * `bin/agentcli.js` of a checkout), so next steps printed by `init` work from any folder.
 */
import { realpathSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { Env } from "../kernel/index.ts";
import { shellQuote } from "./init.ts";

/**
 * The command that starts this agentcli from anywhere.
 *
 * @param executable what was started: the executable itself, or the script Node ran
 *   (`process.argv[1]`); a `.ts` source (Deno on `bin/main.ts`) has no stand-alone command.
 * @example invocationCommand("/home/me/bin/agentcli", { PATH: "/home/me/bin:/usr/bin" }) // "agentcli"
 */
export function invocationCommand(executable: string | undefined, env: Env): string {
  if (!executable || !isAbsolute(executable) || executable.endsWith(".ts")) return "agentcli";
  const self = real(executable);
  // node_modules/.bin is on PATH only inside npm scripts and npx, not in the user's shell.
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || /node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    if (real(join(dir, "agentcli")) === self) return "agentcli";
  }
  return shellQuote(self ?? executable);
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
