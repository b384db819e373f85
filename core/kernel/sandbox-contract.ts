/**
 * The contract a sandbox plugin implements, once, for the `sandbox:create` hook: create or
 * attach the sandbox of a scope key, then run commands in it and move files in and out.
 * The harness turns a {@link Sandbox} into a `deepagents` `BaseSandbox` (see ../harness/sandbox/backend.ts),
 * so the agent's file tools (`ls`, `read_file`, `write_file`, `edit_file`, `glob`, `grep`)
 * and `execute` all act on the sandbox's filesystem; `/memories/**` stays in the store.
 *
 * The server keeps the scope key -> sandbox id mapping in its database (../harness/sandbox/manager.ts): a
 * provider never has to remember it. It is asked to create a sandbox once per scope key and
 * afterwards to attach to the id it returned (after a restart, from another replica, or to
 * resume a stopped sandbox).
 *
 * @example
 * export default definePlugin({
 *   name: "sandbox-my_box",
 *   kind: "sandbox",
 *   sandbox: { provider: "my_box", env: ["MY_BOX_KEY"], partnerPackage: null, defaultTemplate: "default",
 *              capabilities: { persistentFiles: true, network: true, gpu: false } },
 *   hooks: {
 *     "sandbox:create": async (opts) => {
 *       if (opts.provider !== "my_box") return null;
 *       const client = new MyBoxClient(opts.env.MY_BOX_KEY);
 *       const box = opts.sandboxId ? await client.get(opts.sandboxId) : await client.create({ image: opts.image });
 *       if (!box) throw new SandboxNotFoundError(opts.sandboxId!);
 *       return {
 *         id: box.id,
 *         execute: (command, { timeoutMs } = {}) => box.run(command, { timeoutMs }),
 *         uploadFiles: (files) => box.put(files),
 *         downloadFiles: (paths) => box.get(paths),
 *         delete: () => box.destroy(),
 *       };
 *     },
 *   },
 * });
 */
import type { AgentcliError } from "./errors.ts";
import type { Env } from "./hooks.ts";

/** Where a sandbox belongs: one per thread, or one shared by every thread of an assistant. */
export type SandboxScope = "thread" | "assistant";

/** What a provider or runtime offers, as data; the core checks configurations against it. */
export interface SandboxCapabilities {
  /** Files written in one turn are there in the next (and after a server restart). */
  persistentFiles: boolean;
  /** Commands can reach the network (the local runtime: only when allowed, see docs/sandboxes.md). */
  network: boolean;
  gpu: boolean;
}

/** The options of `sandbox:create` ("first" hook: the first plugin that answers non-null wins). */
export interface SandboxCreateOptions {
  /** `[sandbox].provider` of the agent ("sandbox_a", "platform", ...). Answer null when it is not yours. */
  provider: string;
  /** The scope key: `thread:<thread_id>` or `assistant:<assistant_id>`. Stable; usable as a label. */
  key: string;
  scope: SandboxScope;
  /** `[sandbox].template` (the provider's default when the project sets none). */
  template: string;
  /** `[sandbox].image`. */
  image: string;
  /** The server's environment (credentials such as `SANDBOX_A_API_KEY` come from here). */
  env: Env;
  /**
   * The id this plugin returned for this key before, kept in the server's database. When set,
   * attach to that sandbox (resuming it if it was stopped) instead of creating one; throw
   * {@link SandboxNotFoundError} if the provider no longer has it (the server then creates a
   * new one and tells the agent that the old files are gone).
   */
  sandboxId?: string;
  /**
   * For runtimes that run sandboxes on the server's machine (the local runtime): a directory
   * they own for sandbox state, and host paths a sandbox must never see (the server's data
   * directory, the project with its `.env`, the bundle). Null for remote providers' use.
   */
  host?: { stateDir: string; hiddenPaths: string[] } | null;
}

/** Options of one command. */
export interface ExecuteOptions {
  /** Wall-clock limit; at the limit the command (and everything it started) is killed. */
  timeoutMs?: number;
}

/** The result of one command: combined stdout and stderr. */
export interface ExecuteResult {
  output: string;
  /** The exit code; null when the process was killed (timeout) or the provider cannot tell. */
  exitCode: number | null;
  /** True when `output` is only the beginning of what the command printed. */
  truncated: boolean;
  /** True when the command was killed at its timeout. */
  timedOut?: boolean;
}

/** Per-file failure codes, as `deepagents` spells them. */
export type SandboxFileError = "file_not_found" | "permission_denied" | "is_directory" | "invalid_path";

/**
 * A sandbox, as a plugin returns it from `sandbox:create`. Paths are absolute paths inside
 * the sandbox. Every method may throw {@link SandboxNotFoundError} when the sandbox has
 * vanished at the provider; other throws are reported to the agent as tool errors.
 */
export interface Sandbox {
  /** The provider's id of this sandbox; stored by the server and passed back as `sandboxId`. */
  readonly id: string;
  /** Runs `command` with a POSIX shell (`bash -c` where present), in the sandbox's working directory. */
  execute(command: string, opts?: ExecuteOptions): Promise<ExecuteResult>;
  /** Writes files (creating parent directories), binary-safe; partial success per file. */
  uploadFiles(
    files: Array<{ path: string; content: Uint8Array }>,
  ): Promise<Array<{ path: string; error: SandboxFileError | null }>>;
  /** Reads files, binary-safe; partial success per file. */
  downloadFiles(
    paths: string[],
  ): Promise<Array<{ path: string; content: Uint8Array | null; error: SandboxFileError | null }>>;
  /** Deletes the sandbox and its files at the provider. Deleting a sandbox that is already gone is not an error. */
  delete(): Promise<void>;
  /** Optional: releases the sandbox's compute while keeping its files (called after the idle time). */
  stop?(): Promise<void>;
  /** Optional: undoes {@link stop}; called before the first use of a stopped sandbox. */
  resume?(): Promise<void>;
  /** Optional: releases local handles (connections) of this process; the sandbox itself lives on. */
  close?(): Promise<void>;
}

/** What a plugin throws when the sandbox of an id no longer exists at the provider. */
export class SandboxNotFoundError extends Error {
  readonly sandboxId: string;

  constructor(sandboxId: string, message = `Sandbox "${sandboxId}" no longer exists at the provider`) {
    super(message);
    this.name = "SandboxNotFoundError";
    this.sandboxId = sandboxId;
  }
}

/**
 * True for {@link SandboxNotFoundError}, also across copies of this module (a plugin bundled
 * with its own) and when wrapped by the plugin driver (as the `cause` of its error).
 */
export function isSandboxNotFound(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SandboxNotFoundError || e.name === "SandboxNotFoundError") return true;
  }
  return false;
}

/**
 * A runtime that runs the sandboxes of any provider somewhere else (the local runtime runs
 * them on this machine with bubblewrap), selected with `agentcli dev|serve --sandbox <name>`.
 * Its plugin has kind "sandbox-runtime" and answers `sandbox:create` only when selected.
 */
export interface SandboxRuntimeSpec {
  /** What `--sandbox <name>` selects, e.g. "local". */
  name: string;
  capabilities: SandboxCapabilities;
  /** The working directory of commands, told to the model (for example "/workspace"). */
  workdir?: string;
  /**
   * Says why the runtime cannot run here (a missing program, with its install command), or null:
   * its own sentence and fix (shown after `Cannot use --sandbox "<name>": `), or a whole catalogue error.
   */
  check?: (opts: { env: Env }) => Promise<{ message: string; hint: string } | AgentcliError | null>;
  /** What the server warns about once at start when the runtime is selected (a limit it cannot enforce here). */
  warnings?: (opts: { env: Env }) => Promise<string[]>;
}

/** Where the bundle's skills are copied inside a sandbox, so their scripts run with `execute`. */
export const SANDBOX_SKILLS_DIR = "/skills";
