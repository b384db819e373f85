/**
 * A plugin's {@link Sandbox} as a `deepagents` `BaseSandbox`: the agent's file tools and
 * `execute` act on the sandbox of the run's thread (or assistant), found through the
 * {@link SandboxManager} on every call. `deepagents` implements `ls`, `read_file`, `grep`,
 * `glob` with POSIX shell commands through {@link PluginSandboxBackend.execute}, and
 * `write_file`/`edit_file` with uploads and downloads.
 *
 * The bundle's skills are copied into the sandbox under `/skills/` on first use of a key
 * (by each graph, so a dev reload copies the new ones), so a skill's scripts run with `execute`.
 */
import { BaseSandbox, type ExecuteResponse, type FileDownloadResponse, type FileUploadResponse } from "deepagents";
import type { RunnableConfig } from "@langchain/core/runnables";
import { currentConfig } from "../memory-backend.ts";
import { assistantIdOf } from "../namespaces.ts";
import { type ExecuteResult, isSandboxNotFound, type Sandbox, SANDBOX_SKILLS_DIR } from "../../kernel/index.ts";
import type { SandboxManager, SandboxSettings, SandboxTarget } from "./manager.ts";

/** Default of the `execute` tool's `timeout` and of the file tools' commands, in seconds. */
export const DEFAULT_EXECUTE_TIMEOUT_SECONDS = 120;

export interface PluginSandboxBackendOptions {
  manager: SandboxManager;
  settings: () => SandboxSettings;
  defaultAssistantId: string;
  /** Files copied into each sandbox on first use, by absolute sandbox path. */
  seedFiles?: Array<{ path: string; content: Uint8Array }>;
  /** Default per-command limit, in milliseconds. */
  timeoutMs?: number;
}

/** Maps bundle files to sandbox paths: `skills/**` -> `/skills/**`, `subagents/<n>/skills/**` -> `/skills/subagents/<n>/**`. */
export function skillSeedFiles(files: ReadonlyMap<string, Uint8Array>): Array<{ path: string; content: Uint8Array }> {
  const out: Array<{ path: string; content: Uint8Array }> = [];
  for (const [path, content] of files) {
    if (path.startsWith("skills/")) {
      out.push({ path: `${SANDBOX_SKILLS_DIR}/${path.slice("skills/".length)}`, content });
    }
    const m = /^subagents\/([^/]+)\/skills\/(.+)$/.exec(path);
    if (m) out.push({ path: `${SANDBOX_SKILLS_DIR}/subagents/${m[1]}/${m[2]}`, content });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

export class PluginSandboxBackend extends BaseSandbox {
  readonly id = "agentcli-sandbox";
  readonly #o: PluginSandboxBackendOptions;
  readonly #timeoutMs: number;
  #seeded = new Map<string, string>();

  constructor(opts: PluginSandboxBackendOptions) {
    super();
    this.#o = opts;
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_EXECUTE_TIMEOUT_SECONDS * 1000;
  }

  /** Runs a command for the `execute` tool; a notice about a recreated sandbox comes first in `output`. */
  async run(command: string, opts: { timeoutMs?: number } = {}): Promise<ExecuteResult> {
    const { value, notice } = await this.#with(
      (s) => s.execute(command, { timeoutMs: opts.timeoutMs ?? this.#timeoutMs }),
      { retry: true },
    );
    return notice ? { ...value, output: `${notice}\n\n${value.output}` } : value;
  }

  /** Used by the file tools' shell commands (`ls`, `read_file`, `grep`, `glob`). */
  async execute(command: string): Promise<ExecuteResponse> {
    const { value } = await this.#with((s) => s.execute(command, { timeoutMs: this.#timeoutMs }), { retry: false });
    return { output: value.output, exitCode: value.exitCode, truncated: value.truncated };
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const { value } = await this.#with((s) => s.uploadFiles(files.map(([path, content]) => ({ path, content }))), {
      retry: false,
    });
    return value;
  }

  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const { value } = await this.#with((s) => s.downloadFiles(paths), { retry: false });
    return value;
  }

  /** The sandbox the current run uses (tests, and code that needs the handle itself). */
  async current(): Promise<Sandbox> {
    return (await this.#lease(this.#target())).sandbox;
  }

  #target(): SandboxTarget {
    const config = currentConfig() as RunnableConfig | undefined;
    const scope = this.#o.settings().scope;
    if (scope === "assistant") {
      return { key: `assistant:${assistantIdOf(config, this.#o.defaultAssistantId)}`, scope, threadId: null };
    }
    const threadId = (config?.configurable as Record<string, unknown> | undefined)?.thread_id;
    if (typeof threadId !== "string" || !threadId) {
      throw new Error(
        'Cannot use the sandbox: this run has no thread (configurable.thread_id), and [sandbox].scope = "thread" needs one.',
      );
    }
    return { key: `thread:${threadId}`, scope, threadId };
  }

  async #lease(target: SandboxTarget) {
    const lease = await this.#o.manager.acquire(target);
    const seeds = this.#o.seedFiles ?? [];
    if (seeds.length && this.#seeded.get(target.key) !== lease.sandbox.id) {
      const results = await lease.sandbox.uploadFiles(seeds);
      const failed = results.filter((r) => r.error);
      if (failed.length) {
        throw new Error(
          `Cannot copy the skills into the sandbox: ${failed.map((f) => `${f.path} (${f.error})`).join(", ")}`,
        );
      }
      this.#seeded.set(target.key, lease.sandbox.id);
    }
    return lease;
  }

  /**
   * Runs `op` on the current sandbox. When the sandbox vanished at the provider, the key is
   * given a new one: with `retry`, `op` runs there and the notice is returned; otherwise the
   * call fails with the notice (the file tool reports it, nothing was done).
   */
  async #with<T>(
    op: (s: Sandbox) => Promise<T>,
    opts: { retry: boolean },
  ): Promise<{ value: T; notice: string | null }> {
    const target = this.#target();
    let lease = await this.#lease(target);
    if (lease.notice && !opts.retry) {
      throw new Error(`${lease.notice} Nothing was done; repeat the call if it still makes sense.`);
    }
    try {
      return { value: await op(lease.sandbox), notice: lease.notice };
    } catch (err) {
      if (!isSandboxNotFound(err)) throw err;
      await this.#o.manager.vanished(target, lease.sandbox.id);
      lease = await this.#lease(target);
      if (!opts.retry) throw new Error(`${lease.notice} Nothing was done; repeat the call if it still makes sense.`);
      return { value: await op(lease.sandbox), notice: lease.notice };
    }
  }
}
