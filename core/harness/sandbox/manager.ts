/**
 * The scope key -> sandbox mapping, durable in the server's database (table `sandboxes`),
 * so a thread gets its sandbox back after a restart or on another replica.
 *
 * - One sandbox per key: creating one first claims the key with a row in state `creating`
 *   (INSERT ... ON CONFLICT), so two concurrent runs of a new thread create one sandbox; the
 *   loser waits for the row to become `ready`. A claim is a lease: a creator that died is
 *   taken over after {@link CREATE_LEASE_MS}. Nothing is locked: other keys never wait.
 * - A failed creation removes its claim and deletes what the provider made (no orphan).
 * - A sandbox that vanished at the provider is forgotten and created again; the next tool
 *   result says its files are gone.
 * - Idle sandboxes (unused for `AGENTCLI_SANDBOX_IDLE_SECONDS`) are stopped and resumed on
 *   next use; deleting a thread deletes its sandbox.
 *
 * @example
 * const sandboxes = new SandboxManager({ records: storage.sandboxes, driver, env, runtime: "local", host, settings: () => config.sandbox });
 * const { sandbox, notice } = await sandboxes.acquire({ key: "thread:t1", scope: "thread", threadId: "t1" });
 */
import {
  agentcliError,
  type Env,
  type HookLogger,
  isSandboxNotFound,
  type PluginDriver,
  type Sandbox,
  type SandboxCreateOptions,
  SandboxCredentialsMissing,
  SandboxDeletedWhileCreating,
  SandboxProviderNotInstalled,
  SandboxRuntimeNotInstalled,
  type SandboxScope,
} from "../../kernel/index.ts";
import { missingSandboxEnv, secondsSetting } from "../../config/index.ts";
import type { SandboxRecords } from "../../storage/index.ts";

/** How long a `creating` claim holds before another process may take the key over. */
export const CREATE_LEASE_MS = 5 * 60_000;
/** Default of `AGENTCLI_SANDBOX_IDLE_SECONDS`. */
export const DEFAULT_IDLE_SECONDS = 1800;

export interface SandboxSettings {
  provider: string;
  template: string;
  image: string;
  scope: SandboxScope;
}

/** Which sandbox a tool call needs. */
export interface SandboxTarget {
  key: string;
  scope: SandboxScope;
  /** The thread, for thread scope: deleting the thread deletes the sandbox. */
  threadId: string | null;
}

export interface SandboxLease {
  sandbox: Sandbox;
  /** Set once, on the first use after the old sandbox of the key vanished: say so to the model. */
  notice: string | null;
}

export interface SandboxManagerOptions {
  /** The mappings' table (core/storage/sandboxes.ts). */
  records: SandboxRecords;
  driver: PluginDriver;
  env: Env;
  /** The runtime chosen with `--sandbox` ("local"), or null: the provider's plugin. */
  runtime: string | null;
  host: SandboxCreateOptions["host"];
  /** The agent's `[sandbox]` (read on every use: a dev reload may change it). */
  settings: () => SandboxSettings;
  log?: HookLogger;
}

interface Open {
  sandbox: Sandbox;
  notice: string | null;
}

/** `AGENTCLI_SANDBOX_IDLE_SECONDS`: seconds unused before a sandbox is stopped (0: never). */
export function sandboxIdleSeconds(env: Env): number {
  return secondsSetting(env, "AGENTCLI_SANDBOX_IDLE_SECONDS", {
    default: DEFAULT_IDLE_SECONDS,
    meaning: "a sandbox may stay unused before it is stopped (0: never)",
  });
}

export class SandboxManager {
  readonly #o: SandboxManagerOptions;
  readonly #backend: () => string;
  #open = new Map<string, Promise<Open>>();
  #notices = new Map<string, string>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(opts: SandboxManagerOptions) {
    this.#o = opts;
    this.#backend = () => opts.runtime ?? opts.settings().provider;
    const idle = sandboxIdleSeconds(opts.env);
    if (idle > 0) {
      this.#timer = setInterval(() => {
        this.stopIdle(idle * 1000).catch((err) => opts.log?.warn(`stopping idle sandboxes: ${(err as Error).message}`));
      }, Math.min(idle * 500, 60_000));
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /** The sandbox of `target`: cached, attached from the database, or created. */
  async acquire(target: SandboxTarget): Promise<SandboxLease> {
    const backend = this.#backend();
    const ck = `${backend}\u0000${target.key}`;
    for (let attempt = 0;; attempt++) {
      let p = this.#open.get(ck);
      if (!p) {
        p = this.#resolve(backend, target, this.#notices.get(ck) ?? null);
        this.#open.set(ck, p);
        p.then(() => this.#notices.delete(ck), () => this.#open.get(ck) === p && this.#open.delete(ck));
      }
      const open = await p;
      // One round trip per use: keeps the idle clock, and notices a sandbox that another
      // replica stopped, recreated or deleted meanwhile.
      const live = await this.#o.records.touch(target.key, backend, open.sandbox.id);
      if (!live && attempt < 3) {
        if (this.#open.get(ck) === p) this.#open.delete(ck);
        await open.sandbox.close?.().catch(() => {});
        continue;
      }
      const notice = open.notice;
      open.notice = null;
      return { sandbox: open.sandbox, notice };
    }
  }

  /** Forgets a sandbox the provider no longer has; the next {@link acquire} creates a new one. */
  async vanished(target: SandboxTarget, sandboxId: string): Promise<void> {
    const backend = this.#backend();
    const ck = `${backend}\u0000${target.key}`;
    this.#open.delete(ck);
    this.#notices.set(ck, vanishedNotice(target));
    await this.#o.records.forget(target.key, backend, sandboxId);
  }

  /** Deletes the sandboxes of a thread at the provider, then their rows. Never throws for the provider. */
  async deleteThread(threadId: string): Promise<void> {
    for (const row of await this.#o.records.ofThread(threadId)) {
      this.#open.delete(`${row.backend}\u0000${row.scope_key}`);
      if (row.sandbox_id && row.backend === this.#backend()) {
        try {
          const sandbox = await this.#hook({ key: row.scope_key, scope: "thread", threadId }, row.sandbox_id);
          await sandbox.delete();
        } catch (err) {
          if (!isSandboxNotFound(err)) {
            this.#o.log?.warn(
              `Cannot delete sandbox "${row.sandbox_id}" of thread "${threadId}": ${(err as Error).message}`,
            );
          }
        }
      } else if (row.sandbox_id) {
        this.#o.log?.warn(
          `Sandbox "${row.sandbox_id}" of thread "${threadId}" belongs to "${row.backend}", which this server does not run: delete it there.`,
        );
      }
      await this.#o.records.forgetKey(row.scope_key, row.backend);
    }
  }

  /** Stops the sandboxes unused for `idleMs` (one replica wins each); returns how many. */
  async stopIdle(idleMs: number): Promise<number> {
    const backend = this.#backend();
    const rows = await this.#o.records.stopIdle(backend, idleMs);
    for (const row of rows) {
      const open = this.#open.get(`${backend}\u0000${row.scope_key}`);
      this.#open.delete(`${backend}\u0000${row.scope_key}`);
      try {
        const sandbox = open ? (await open).sandbox : await this.#hook({
          key: row.scope_key,
          scope: row.thread_id ? "thread" : "assistant",
          threadId: row.thread_id,
        }, row.sandbox_id);
        await sandbox.stop?.();
        await sandbox.close?.();
      } catch (err) {
        if (isSandboxNotFound(err)) await this.#o.records.forget(row.scope_key, backend, row.sandbox_id);
        else this.#o.log?.warn(`Cannot stop idle sandbox "${row.sandbox_id}": ${(err as Error).message}`);
      }
    }
    return rows.length;
  }

  /** Stops the idle timer and releases local handles; sandboxes live on. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.allSettled(all.map(async (p) => (await p).sandbox.close?.()));
  }

  async #resolve(backend: string, target: SandboxTarget, notice: string | null): Promise<Open> {
    const records = this.#o.records;
    for (;;) {
      const row = await records.get(target.key, backend);
      if (row?.sandbox_id && row.status !== "creating") {
        try {
          const sandbox = await this.#hook(target, row.sandbox_id);
          if (row.status === "stopped") {
            await sandbox.resume?.();
            await records.resumed(target.key, backend, row.sandbox_id);
          }
          return { sandbox, notice };
        } catch (err) {
          if (!isSandboxNotFound(err)) throw err;
          await records.forget(target.key, backend, row.sandbox_id);
          notice = vanishedNotice(target);
          continue;
        }
      }
      if (row && row.claim_live) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const token = crypto.randomUUID();
      const claim = { key: target.key, backend, token };
      if (!(await records.claim({ ...claim, threadId: target.threadId, leaseMs: CREATE_LEASE_MS }))) continue;
      let sandbox: Sandbox | null = null;
      try {
        sandbox = await this.#hook(target, undefined);
        if (!(await records.created(claim, sandbox.id))) {
          throw agentcliError(SandboxDeletedWhileCreating, { key: target.key });
        }
        return { sandbox, notice };
      } catch (err) {
        await records.unclaim(target.key, backend, token).catch(() => {});
        if (sandbox) {
          await sandbox.delete().catch((e) =>
            this.#o.log?.warn(`Cannot delete sandbox "${sandbox!.id}" after a failed creation: ${(e as Error).message}`)
          );
        }
        throw err;
      }
    }
  }

  /** Asks the plugins (or the chosen runtime) to create, or attach to `sandboxId`. */
  async #hook(target: SandboxTarget, sandboxId: string | undefined): Promise<Sandbox> {
    const { driver, env, runtime } = this.#o;
    const settings = this.#o.settings();
    const { provider } = settings;
    if (!runtime) {
      const spec = driver.spec("sandbox", provider);
      const missing = missingSandboxEnv(spec, env);
      if (missing.length) {
        throw agentcliError(SandboxCredentialsMissing, { provider, names: missing });
      }
    }
    // The chosen runtime (--sandbox local) or the provider's own plugin answers.
    const sandbox = await driver.runProvider(
      { hook: "sandbox:create", kind: runtime ? "sandbox-runtime" : "sandbox", key: runtime ?? provider },
      {
        provider,
        key: target.key,
        scope: target.scope,
        template: settings.template,
        image: settings.image,
        env,
        ...(sandboxId ? { sandboxId } : {}),
        host: this.#o.host ?? null,
      },
    );
    if (!sandbox) {
      throw runtime
        ? agentcliError(SandboxRuntimeNotInstalled, { runtime, provider })
        : agentcliError(SandboxProviderNotInstalled, { provider });
    }
    return sandbox;
  }
}

function vanishedNotice(target: SandboxTarget): string {
  return `Note: the sandbox of this ${target.scope} no longer existed at the provider, so a new, empty one was created: files written to the old sandbox are gone.`;
}
