/**
 * Runs hooks across plugins. Every call is wrapped so a failure names the plugin and the
 * hook; user errors thrown by a plugin keep their own message and status.
 *
 * @example
 * const driver = new PluginDriver(plugins);
 * const user = await driver.runProvider({ hook: "auth:authenticate", kind: "identity", key: "identity_a" }, {
 *   request, provider: "identity_a", env, dev: false,
 * });
 */
import { AgentcliError, agentcliError } from "./errors.ts";
import { Forbidden, PluginHookFailed, Unauthorized } from "./errors-data.ts";
import {
  type ComputeSpec,
  type DeployTargetSpec,
  HOOK_MODES,
  type HookName,
  type Hooks,
  type IdentityProviderSpec,
  type ModelProviderSpec,
  type Plugin,
  type SandboxProviderSpec,
  type SandboxRuntimeSpec,
} from "./hooks.ts";

type HookArgs<K extends HookName> = Parameters<Hooks[K]>[0];
type HookResult<K extends HookName> = Awaited<ReturnType<Hooks[K]>>;

/** The provider spec each kind declares, by kind. */
export interface ProviderSpecs {
  model: ModelProviderSpec;
  identity: IdentityProviderSpec;
  sandbox: SandboxProviderSpec;
  "sandbox-runtime": SandboxRuntimeSpec;
  deploy: DeployTargetSpec;
  compute: ComputeSpec;
}

/**
 * The kinds a provider is chosen by: each spec kind, plus `memory` (a plugin with a
 * `memory:backend` hook, chosen by its plugin name: `AGENTCLI_MEMORY`).
 */
export type ProviderKind = keyof ProviderSpecs | "memory";

/**
 * The key a plugin's spec declares, the one the driver chooses it by: a model's `prefix`, an
 * identity's or a sandbox's `provider`, a sandbox runtime's `name`, a deploy target's `target`,
 * a compute's `type`.
 * Null for a plugin without a spec (kind "extension").
 */
export function providerKey(p: Plugin): { kind: keyof ProviderSpecs; key: string } | null {
  switch (p.kind) {
    case "model":
      return { kind: "model", key: p.model.prefix };
    case "identity":
      return { kind: "identity", key: p.identity.provider };
    case "sandbox":
      return { kind: "sandbox", key: p.sandbox.provider };
    case "sandbox-runtime":
      return { kind: "sandbox-runtime", key: p.sandboxRuntime.name };
    case "deploy":
      return { kind: "deploy", key: p.deploy.target };
    case "compute":
      return { kind: "compute", key: p.compute.type };
    default:
      return null;
  }
}

function specOf<K extends keyof ProviderSpecs>(p: Plugin, kind: K): ProviderSpecs[K] | undefined {
  if (p.kind !== kind) return undefined;
  switch (p.kind) {
    case "model":
      return p.model as ProviderSpecs[K];
    case "identity":
      return p.identity as ProviderSpecs[K];
    case "sandbox":
      return p.sandbox as ProviderSpecs[K];
    case "sandbox-runtime":
      return p.sandboxRuntime as ProviderSpecs[K];
    case "deploy":
      return p.deploy as ProviderSpecs[K];
    case "compute":
      return p.compute as ProviderSpecs[K];
    default:
      return undefined;
  }
}

/** Which provider answers a "first" hook: the hook, the provider kind and the key its spec declares. */
export interface ProviderHook<K extends HookName> {
  hook: K;
  kind: ProviderKind;
  key: string;
}

export class PluginDriver {
  readonly plugins: readonly Plugin[];

  constructor(plugins: readonly Plugin[]) {
    this.plugins = plugins;
  }

  /** Every spec of a provider kind, in registration order (`specs("model")` lists the model providers). */
  specs<K extends keyof ProviderSpecs>(kind: K): Array<ProviderSpecs[K]> {
    return this.plugins.flatMap((p) => specOf(p, kind) ?? []);
  }

  /** The spec that declares `key` for its kind (`spec("sandbox", "sandbox_a")`), or undefined. */
  spec<K extends keyof ProviderSpecs>(kind: K, key: string): ProviderSpecs[K] | undefined {
    const plugin = this.provider(kind, key);
    return plugin ? specOf(plugin, kind) : undefined;
  }

  /**
   * The plugin chosen for a provider: the one whose spec declares `key` (validation makes it
   * unique), or for `memory` the plugin named `key` that has a `memory:backend` hook.
   */
  provider(kind: ProviderKind, key: string): Plugin | undefined {
    if (kind === "memory") return this.plugins.find((p) => p.name === key && p.hooks?.["memory:backend"]);
    return this.plugins.find((p) => {
      const declared = providerKey(p);
      return declared !== null && declared.kind === kind && declared.key === key;
    });
  }

  /**
   * Runs a "first" hook for one provider: on the plugin {@link provider} chooses, so no plugin
   * compares names itself. When that plugin has no such hook (a spec-only plugin, or none
   * declares `key`), plugins without a spec (kind "extension") are asked in order, as with
   * {@link runFirst}. Null when nothing answers.
   */
  async runProvider<K extends HookName>(
    which: ProviderHook<K>,
    args: HookArgs<K>,
  ): Promise<NonNullable<HookResult<K>> | null> {
    const { hook, kind, key } = which;
    assertMode(hook, "first");
    const chosen = this.provider(kind, key);
    if (chosen?.hooks?.[hook]) return this.#ask(chosen, hook, args);
    for (const plugin of this.plugins) {
      if (plugin.kind !== "extension" || plugin === chosen) continue;
      const result = await this.#ask(plugin, hook, args);
      if (result !== null) return result;
    }
    return null;
  }

  async #ask<K extends HookName>(
    plugin: Plugin,
    hook: K,
    args: HookArgs<K>,
  ): Promise<NonNullable<HookResult<K>> | null> {
    const fn = plugin.hooks?.[hook];
    if (!fn) return null;
    const result = await callHook(plugin, hook, () => (fn as (a: HookArgs<K>) => unknown)(args));
    return result === null || result === undefined ? null : (result as NonNullable<HookResult<K>>);
  }

  get(name: string): Plugin | undefined {
    return this.plugins.find((p) => p.name === name);
  }

  /** "first" hooks: the first plugin that answers non-null wins; `only` restricts to one plugin, `where` to some. */
  async runFirst<K extends HookName>(
    hook: K,
    args: HookArgs<K>,
    opts: { only?: string; where?: (plugin: Plugin) => boolean } = {},
  ): Promise<NonNullable<HookResult<K>> | null> {
    assertMode(hook, "first");
    for (const plugin of this.plugins) {
      if (opts.only && plugin.name !== opts.only) continue;
      if (opts.where && !opts.where(plugin)) continue;
      const fn = plugin.hooks?.[hook];
      if (!fn) continue;
      const result = await callHook(plugin, hook, () => (fn as (a: HookArgs<K>) => unknown)(args));
      if (result !== null && result !== undefined) return result as NonNullable<HookResult<K>>;
    }
    return null;
  }

  /** "sequential" hooks: each plugin sees the previous plugin's result (when it returns one). */
  async runSequential<K extends HookName>(hook: K, args: HookArgs<K>, carry?: keyof HookArgs<K>): Promise<HookArgs<K>> {
    assertMode(hook, "sequential");
    let current = args;
    for (const plugin of this.plugins) {
      const fn = plugin.hooks?.[hook];
      if (!fn) continue;
      const result = await callHook(plugin, hook, () => (fn as (a: HookArgs<K>) => unknown)(current));
      if (carry && result !== undefined && result !== null) current = { ...current, [carry]: result };
    }
    return current;
  }
}

function assertMode(hook: HookName, mode: string): void {
  if (HOOK_MODES[hook] !== mode) {
    throw new Error(
      `Hook "${hook}" runs as "${HOOK_MODES[hook]}", not "${mode}": core called it with the wrong method`,
    );
  }
}

async function callHook(plugin: Plugin, hook: HookName, call: () => unknown): Promise<unknown> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof AgentcliError && err.code !== "PLUGIN_FAILED") throw err;
    const reason = err instanceof Error ? err.message : String(err);
    // A refusal made with another copy of agentcli (a plugin's own dependency) is still a refusal.
    const status = (err as { status?: unknown } | null)?.status;
    if (status === 401 || status === 403) {
      const values = { problem: reason, fix: (err as { hint?: string }).hint };
      throw agentcliError(status === 401 ? Unauthorized : Forbidden, values, { status, cause: err });
    }
    // A crash: over HTTP a 500 whose body names nothing (core/server/http/errors.ts logs this message).
    throw agentcliError(PluginHookFailed, { hook, plugin: plugin.name, reason }, { status: 500, cause: err });
  }
}
