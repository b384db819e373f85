/**
 * The graphs a server serves, loaded lazily on first use and bound to the server's
 * checkpointer and store. `replace` swaps the whole set (dev reload) without touching
 * threads: the next run uses the new graph.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { userError } from "../errors.ts";

/** What the server needs of a compiled LangGraph graph. */
// deno-lint-ignore no-explicit-any
export type CompiledGraph = any;

export type GraphLoaders = Record<string, () => Promise<CompiledGraph>>;

/** Lazily loaded graphs by id. */
export class GraphRegistry {
  #loaders: GraphLoaders;
  #cache = new Map<string, Promise<CompiledGraph>>();
  readonly #checkpointer: BaseCheckpointSaver;
  readonly #store: BaseStore;

  constructor(loaders: GraphLoaders, opts: { checkpointer: BaseCheckpointSaver; store: BaseStore }) {
    this.#loaders = { ...loaders };
    this.#checkpointer = opts.checkpointer;
    this.#store = opts.store;
  }

  ids(): string[] {
    return Object.keys(this.#loaders);
  }

  has(id: string): boolean {
    return Object.hasOwn(this.#loaders, id);
  }

  /** The compiled graph of `id`, bound to the server's checkpointer and store. */
  get(id: string): Promise<CompiledGraph> {
    let p = this.#cache.get(id);
    if (!p) {
      const loader = this.#loaders[id];
      if (!loader) {
        return Promise.reject(userError("NOT_FOUND", { message: `Cannot find graph "${id}": this server does not serve it`, hint: `Graphs served: ${this.ids().map((g) => `"${g}"`).join(", ")}.` }));
      }
      p = loader().then((graph: CompiledGraph) => {
        graph.checkpointer = this.#checkpointer;
        graph.store = this.#store;
        return graph;
      });
      p.catch(() => this.#cache.delete(id));
      this.#cache.set(id, p);
    }
    return p;
  }

  /** Swaps in a new set of graphs; runs already executing keep the graph they started with. */
  replace(loaders: GraphLoaders): void {
    this.#loaders = { ...loaders };
    this.#cache = new Map();
    this.#finished = new WeakSet();
  }

  // Graphs that finished a run here: later runs of them are "warm" (their modules loaded,
  // their first-use work done), which is when the dev blocking monitor listens.
  #finished = new WeakSet<object>();
  #warmActive = 0;
  #warmStarted = 0;

  /** Notes a run starting on `graph`; call the returned function when it ends. */
  runStarted(graph: CompiledGraph): () => void {
    const warm = typeof graph === "object" && graph !== null && this.#finished.has(graph);
    if (warm) {
      this.#warmActive++;
      this.#warmStarted++;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (warm) this.#warmActive--;
      if (typeof graph === "object" && graph !== null) this.#finished.add(graph);
    };
  }

  /** Runs executing on graphs that had finished a run before, and how many ever started. */
  warmRuns(): { active: number; started: number } {
    return { active: this.#warmActive, started: this.#warmStarted };
  }
}
