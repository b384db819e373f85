/**
 * The control plane's sandboxes on a local listener: run by the local sandbox runtime
 * (`--sandbox local`, bubblewrap; see `plugins/sandbox/local.ts`), reached through the
 * `sandbox:create` hook of the plugin driver, in `<data-dir>/sandboxes`, with the control
 * plane's data folder among the paths a sandbox never sees. That runtime runs one process per
 * command and returns its combined output when it ends: on this listener a command's stderr
 * arrives within its stdout, all at once, and a command ends at its timeout (no kill).
 */
import { chmod, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Env, PluginDriver, Sandbox } from "../../kernel/index.ts";
import {
  type BoxFileError,
  type BoxProcess,
  type BoxRuntime,
  type BoxSpec,
  commandLine,
  type RunOptions,
} from "./runtime.ts";

const DEFAULT_TIMEOUT_MS = 600_000;

export class LocalBoxRuntime implements BoxRuntime {
  readonly kind = "local";
  readonly workdir: string;
  readonly #driver: PluginDriver;
  readonly #stateDir: string;
  readonly #hidden: string[];
  readonly #env: Env;

  /**
   * `driver`: has the `local` sandbox-runtime plugin; `dataDir`: the control plane's folder;
   * `env`: the runtime's settings (`AGENTCLI_SANDBOX_*`).
   */
  constructor(opts: { driver: PluginDriver; dataDir: string; env: Env }) {
    this.#driver = opts.driver;
    this.#stateDir = join(resolve(opts.dataDir), "sandboxes");
    this.#hidden = [resolve(opts.dataDir)];
    this.#env = opts.env;
    const spec = opts.driver.spec("sandbox-runtime", "local");
    this.workdir = spec?.workdir ?? "/workspace";
  }

  async #open(box: { id: string; image?: string }, ref: string | null): Promise<Sandbox> {
    const sandbox = await this.#driver.runProvider("sandbox:create", "sandbox-runtime", "local", {
      provider: "platform",
      key: `platform:${box.id}`,
      scope: "thread",
      template: "",
      image: box.image ?? "",
      env: this.#env,
      ...(ref ? { sandboxId: ref } : {}),
      host: { stateDir: this.#stateDir, hiddenPaths: this.#hidden },
    });
    if (!sandbox) throw new Error("the local sandbox runtime (plugin sandbox-local) is not installed");
    return sandbox;
  }

  async create(box: BoxSpec, ref?: string | null): Promise<string> {
    // The runtime runs commands as "nobody" when this process is root: it must be able to
    // pass through the data folder to its sandbox folders (search permission only, no listing).
    const data = dirname(this.#stateDir);
    const mode = (await stat(data)).mode;
    if ((mode & 0o001) === 0) await chmod(data, (mode & 0o7777) | 0o001);
    return ref ? (await this.#open(box, ref)).id : (await this.#open(box, null)).id;
  }

  run(ref: string, opts: RunOptions): BoxProcess {
    const result = this.#open({ id: ref }, ref).then((s) =>
      s.execute(commandLine(opts), { timeoutMs: opts.timeoutMs || DEFAULT_TIMEOUT_MS })
    );
    const once = (pick: (r: Awaited<typeof result>) => string): AsyncIterable<Uint8Array> => ({
      async *[Symbol.asyncIterator]() {
        const text = pick(await result.catch(() => ({ output: "", exitCode: null, truncated: false })));
        if (text) yield new TextEncoder().encode(text);
      },
    });
    return {
      stdout: once((r) => r.output),
      stderr: once(() => ""),
      exited: result.then((r) => ({ exitCode: r.timedOut ? null : r.exitCode, timedOut: r.timedOut === true })),
      kill: () => {},
    };
  }

  async upload(ref: string, path: string, content: Uint8Array): Promise<BoxFileError | null> {
    const [r] = await (await this.#open({ id: ref }, ref)).uploadFiles([{ path: this.#absolute(path), content }]);
    return r?.error ?? null;
  }

  async download(ref: string, path: string, maxBytes: number) {
    const [r] = await (await this.#open({ id: ref }, ref)).downloadFiles([this.#absolute(path)]);
    if (!r || r.error || !r.content) return { content: null, error: r?.error ?? "file_not_found" } as const;
    if (r.content.byteLength > maxBytes) return { content: null, error: "too_large" } as const;
    return { content: r.content, error: null } as const;
  }

  #absolute(path: string): string {
    return path.startsWith("/") ? path : `${this.workdir}/${path}`;
  }

  async stop(): Promise<void> {}

  async remove(ref: string): Promise<void> {
    try {
      await (await this.#open({ id: ref }, ref)).delete();
    } catch (err) {
      if ((err as Error).name !== "SandboxNotFoundError") throw err;
    }
  }

  async close(): Promise<void> {}
}
