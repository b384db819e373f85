/**
 * What every CLI command receives: where to write, the environment, the working directory,
 * whether a person is at the terminal, and the plugins. Commands return an exit code; only
 * `bin/main.ts` exits the process.
 */
import type { Env, Plugin } from "../kernel/index.ts";

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** Asks a yes/no question on the terminal; resolves false on anything but y/yes. */
  confirm(question: string): Promise<boolean>;
  readonly interactive: boolean;
  readonly color: boolean;
}

export interface CliContext {
  io: CliIO;
  env: Env;
  cwd: string;
  /** Paths of third-party plugin files (from `--plugin` and `AGENTCLI_PLUGINS`). */
  pluginPaths: string[];
  /**
   * The plugins compiled into this agentcli (`plugins/registry.ts`, or a custom executable's
   * list): the entry provides them, so core never imports a concrete plugin.
   */
  builtinPlugins: () => Promise<readonly Plugin[]>;
  version: string;
  /**
   * The command that runs this agentcli again from any folder, for next steps printed to the
   * user: `agentcli` when it is on PATH, else its absolute path (`invocationCommand`).
   */
  invocation?: string;
  /** Resolves once on SIGINT/SIGTERM; long-running commands await it to shut down. */
  shutdownSignal: AbortSignal;
}

export type CommandModule = { run(argv: string[], ctx: CliContext): Promise<number> };
