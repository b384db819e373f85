/**
 * The memory hook's two directions: the server's LangGraph store as a {@link MemoryBackend}
 * (what the built-in "memory-store" plugin gives), and a plugin's {@link MemoryBackend} as
 * the LangGraph store the memory routes, seeding and instructions read and write.
 *
 * @example
 * const memory = await memoryStore({ driver, env, store, assistantId: "research" });
 */
import { BaseStore, type Item, type Operation, type OperationResults } from "@langchain/langgraph-checkpoint";
import { type Env, type MemoryBackend, type PluginDriver, userError } from "../kernel/index.ts";

/** The plugin that provides memory unless `AGENTCLI_MEMORY` names another. */
export const DEFAULT_MEMORY_PLUGIN = "memory-store";

/** The server's store, seen through the plugin interface. */
export function storeAsMemoryBackend(store: BaseStore): MemoryBackend {
  return {
    get: async (namespace, key) => (await store.get(namespace, key))?.value ?? null,
    put: (namespace, key, value) => store.put(namespace, key, value),
    delete: (namespace, key) => store.delete(namespace, key),
    list: async (namespace, page) => {
      // A search by prefix also finds deeper namespaces: keep this one's entries only.
      const items = await store.search(namespace, page);
      return items.filter((i) => i.namespace.length === namespace.length).map((i) => ({ key: i.key, value: i.value }));
    },
  };
}

/** A plugin's backend as a LangGraph store (get, put, delete, and search of one namespace, which is how memory uses it). */
export class MemoryBackendStore extends BaseStore {
  readonly #backend: MemoryBackend;
  readonly #plugin: string;

  constructor(backend: MemoryBackend, plugin: string) {
    super();
    this.#backend = backend;
    this.#plugin = plugin;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) results.push(await this.#run(op));
    return results as OperationResults<Op>;
  }

  async #run(op: Operation): Promise<unknown> {
    const now = new Date(0);
    const item = (namespace: string[], key: string, value: Record<string, unknown>): Item => ({
      namespace,
      key,
      value,
      createdAt: now,
      updatedAt: now,
    });
    try {
      if ("namespacePrefix" in op) {
        if (op.query || (op.filter && Object.keys(op.filter).length)) {
          throw new Error("memory plugins do not search by query or filter");
        }
        const rows = await this.#backend.list(op.namespacePrefix, { limit: op.limit ?? 10, offset: op.offset ?? 0 });
        return rows.map((r) => item(op.namespacePrefix, r.key, r.value));
      }
      if ("value" in op) {
        if (op.value === null) await this.#backend.delete(op.namespace, op.key);
        else await this.#backend.put(op.namespace, op.key, op.value);
        return undefined;
      }
      if ("key" in op) {
        const value = await this.#backend.get(op.namespace, op.key);
        return value === null ? null : item(op.namespace, op.key, value);
      }
      throw new Error("memory plugins do not list namespaces");
    } catch (err) {
      throw userError("PLUGIN_FAILED", {
        message: `Cannot use the memory of plugin "${this.#plugin}": ${
          err instanceof Error ? err.message : String(err)
        }`,
        status: 500,
        cause: err,
      });
    }
  }
}

/** The store behind `/memories/`: from the memory plugin `AGENTCLI_MEMORY` selects (default: the server's own store). */
export async function memoryStore(
  opts: { driver: PluginDriver; env: Env; store: BaseStore; assistantId: string },
): Promise<BaseStore> {
  const name = opts.env.AGENTCLI_MEMORY?.trim() || DEFAULT_MEMORY_PLUGIN;
  const plugin = opts.driver.get(name);
  if (!plugin?.hooks?.["memory:backend"]) {
    const known = opts.driver.plugins.filter((p) => p.hooks?.["memory:backend"]).map((p) => `"${p.name}"`).join(", ") ||
      "none";
    throw userError("CONFIG_INVALID", {
      message: `Cannot set up memory: ${
        plugin ? `plugin "${name}" has no "memory:backend" hook` : `no plugin "${name}"`
      } (AGENTCLI_MEMORY)`,
      hint: `Set AGENTCLI_MEMORY to a memory plugin (${known}), or load it with --plugin.`,
    });
  }
  const serverStore = storeAsMemoryBackend(opts.store);
  const backend = await opts.driver.runProvider("memory:backend", "memory", name, {
    assistantId: opts.assistantId,
    env: opts.env,
    serverStore,
  });
  if (!backend) {
    throw userError("CONFIG_INVALID", {
      message: `Cannot set up memory: plugin "${name}" gave no memory backend`,
      hint: 'Its "memory:backend" hook answered null; report it to the plugin\'s author.',
    });
  }
  return backend === serverStore ? opts.store : new MemoryBackendStore(backend, name);
}
