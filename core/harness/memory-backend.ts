/**
 * The file system the agent's tools see: `/memories/...` routed to durable store
 * namespaces (spec 2.8), everything else to per-thread state (or the sandbox backend).
 * A store failure, or user memory without an authenticated user, is a result error the
 * model sees, never a crash.
 */
import { type BackendProtocolV2, CompositeBackend, StoreBackend } from "deepagents";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { getConfig } from "@langchain/langgraph";
import { assistantIdOf, authenticatedUserOf, sharedNamespace, subagentNamespace, userNamespace } from "./namespaces.ts";

export const MEMORIES = "/memories";
export const USER_MEMORY_FILE = "/memories/user/AGENTS.md";

export class MemoryUnavailableError extends Error {}

/** Reads the config of the run in progress, or undefined outside a run. */
export function currentConfig(): RunnableConfig | undefined {
  try {
    return getConfig();
  } catch {
    return undefined;
  }
}

/**
 * Builds the composite backend of one agent graph.
 *
 * @example
 * const backend = createMemoryBackend({ store, defaultAssistantId: "research", subagents: ["critic"], fallback: new StateBackend() });
 */
export function createMemoryBackend(opts: {
  store: BaseStore;
  defaultAssistantId: string;
  subagents: readonly string[];
  fallback: BackendProtocolV2;
}): CompositeBackend {
  const { store, defaultAssistantId } = opts;
  const aid = (config: RunnableConfig | undefined) => assistantIdOf(config, defaultAssistantId);
  const shared = new StoreBackend({ store, namespace: ({ config }) => sharedNamespace(aid(config as RunnableConfig)) });
  const user = new StoreBackend({
    store,
    namespace: ({ config }) => {
      const userId = authenticatedUserOf(config as RunnableConfig);
      if (!userId) {
        throw new MemoryUnavailableError(
          "Cannot use /memories/user: this conversation has no authenticated user, so there is no per-user memory.",
        );
      }
      return userNamespace(aid(config as RunnableConfig), userId);
    },
  });
  const routes: Record<string, BackendProtocolV2> = {
    [`${MEMORIES}/`]: guarded(shared),
    [`${MEMORIES}/user/`]: guarded(user),
  };
  for (const name of opts.subagents) {
    routes[`${MEMORIES}/subagents/${name}/`] = guarded(
      new StoreBackend({ store, namespace: ({ config }) => subagentNamespace(aid(config as RunnableConfig), name) }),
    );
  }
  return new CompositeBackend(opts.fallback, routes);
}

const RESULT_METHODS = ["ls", "read", "readRaw", "write", "edit", "grep", "glob", "delete"] as const;

/** Wraps a backend so a thrown error becomes `{ error }`, which the file tools report to the model. */
function guarded(inner: BackendProtocolV2): BackendProtocolV2 {
  const wrapper: Record<string, unknown> = {};
  for (const method of RESULT_METHODS) {
    const fn = (inner as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>)[method];
    if (!fn) continue;
    wrapper[method] = async (...args: unknown[]) => {
      try {
        return await fn.apply(inner, args);
      } catch (err) {
        return { error: err instanceof Error ? err.message : String(err) };
      }
    };
  }
  wrapper.downloadFiles = async (paths: string[]) => {
    try {
      return await inner.downloadFiles!(paths);
    } catch {
      return paths.map((path) => ({ path, content: null, error: "permission_denied" as const }));
    }
  };
  wrapper.uploadFiles = async (files: Array<[string, Uint8Array]>) => {
    try {
      return await inner.uploadFiles!(files);
    } catch {
      return files.map(([path]) => ({ path, error: "permission_denied" as const }));
    }
  };
  return wrapper as unknown as BackendProtocolV2;
}
