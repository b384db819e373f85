/**
 * Runs hooks across plugins. Every call is wrapped so a failure names the plugin and the
 * hook; user errors thrown by a plugin keep their own message and status.
 *
 * @example
 * const driver = new PluginDriver(plugins);
 * const user = await driver.runFirst("auth:authenticate", { request, provider: "identity_a", env, dev: false });
 */
import { AgentcliError, userError } from "./errors.ts";
import { HOOK_MODES, type HookName, type Hooks, type Plugin, type PluginKind } from "./hooks.ts";

type HookArgs<K extends HookName> = Parameters<Hooks[K]>[0];
type HookResult<K extends HookName> = Awaited<ReturnType<Hooks[K]>>;

export class PluginDriver {
  readonly plugins: readonly Plugin[];

  constructor(plugins: readonly Plugin[]) {
    this.plugins = plugins;
  }

  byKind<K extends PluginKind>(kind: K): Array<Extract<Plugin, { kind: K }>> {
    return this.plugins.filter((p): p is Extract<Plugin, { kind: K }> => p.kind === kind);
  }

  get(name: string): Plugin | undefined {
    return this.plugins.find((p) => p.name === name);
  }

  /** "first" hooks: the first plugin that answers non-null wins; `only` restricts to one plugin, `where` to some. */
  async runFirst<K extends HookName>(hook: K, args: HookArgs<K>, opts: { only?: string; where?: (plugin: Plugin) => boolean } = {}): Promise<NonNullable<HookResult<K>> | null> {
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

  /** "parallel" hooks: all plugins at once; the first failure is reported after all settle. */
  async runParallel<K extends HookName>(hook: K, args: HookArgs<K>): Promise<void> {
    assertMode(hook, "parallel");
    const calls = this.plugins
      .filter((p) => p.hooks?.[hook])
      .map((p) => callHook(p, hook, () => (p.hooks![hook] as (a: HookArgs<K>) => unknown)(args)));
    const settled = await Promise.allSettled(calls);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) throw failed.reason;
  }
}

function assertMode(hook: HookName, mode: string): void {
  if (HOOK_MODES[hook] !== mode) throw new Error(`Hook "${hook}" runs as "${HOOK_MODES[hook]}", not "${mode}"`);
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
      throw userError(status === 401 ? "UNAUTHORIZED" : "FORBIDDEN", { message: reason, hint: (err as { hint?: string }).hint, status, cause: err });
    }
    // A crash: over HTTP a 500 whose body names nothing (core/server/http/errors.ts logs this message).
    throw userError("PLUGIN_FAILED", {
      message: `Cannot run hook "${hook}" of plugin "${plugin.name}": ${reason}`,
      hint: `This is a failure inside the plugin "${plugin.name}"; check its configuration or report it to its author.`,
      status: 500,
      cause: err,
    });
  }
}
