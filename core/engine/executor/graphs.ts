/**
 * The graphs a server serves, loaded lazily on first use and bound to the server's
 * checkpointer and store. A graph is what `langgraph.json` accepts: a compiled graph, an
 * uncompiled `StateGraph` (compiled here), or a (possibly async) factory taking the run
 * config, called for every run. `replace` swaps the whole set (dev reload) without touching
 * threads: the next run uses the new graph.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { messagesStateReducer } from "@langchain/langgraph";
import { userError } from "../../kernel/index.ts";
import { RunCheckpointer } from "./checkpointer.ts";

/** What the server needs of a compiled LangGraph graph. */
// deno-lint-ignore no-explicit-any
export type CompiledGraph = any;

/** Loads a graph export: a compiled graph, a `StateGraph`, or a factory of either. */
export type GraphLoaders = Record<string, () => Promise<unknown>>;

/** A run config as a graph factory receives it. */
export interface FactoryConfig {
  configurable?: Record<string, unknown>;
  [k: string]: unknown;
}

type Resolved = { graph: CompiledGraph } | { factory: (config: FactoryConfig) => unknown };

/**
 * What kind of graph export `value` is, or a sentence saying what was found instead (for
 * an error naming the module).
 */
export function graphExportKind(value: unknown): "compiled" | "builder" | "factory" | { found: string } {
  if (typeof value === "function") return "factory";
  if (typeof value === "object" && value !== null) {
    const v = value as Record<string, unknown>;
    if (typeof v.stream === "function" && typeof v.getState === "function") return "compiled";
    if (typeof v.compile === "function") return "builder";
    const name = (value.constructor as { name?: string } | undefined)?.name;
    return {
      found: `an object${name && name !== "Object" ? ` (${name})` : ""} with keys ${
        Object.keys(v).slice(0, 5).map((k) => `"${k}"`).join(", ") || "none"
      }`,
    };
  }
  return {
    found: value === undefined
      ? "nothing (undefined)"
      : value === null
      ? "null"
      : `a ${typeof value} (${JSON.stringify(value)?.slice(0, 40)})`,
  };
}

/** A compiled graph from a graph-like value (compiles a builder; unwraps `createAgent`'s wrapper). */
function compiled(value: unknown, where: string): CompiledGraph {
  const kind = graphExportKind(value);
  if (kind === "builder") return (value as { compile(): unknown }).compile();
  if (kind === "compiled") {
    const inner = (value as { graph?: unknown }).graph;
    return inner && graphExportKind(inner) === "compiled" && (value as { builder?: unknown }).builder ? inner : value;
  }
  throw userError("ARGS_INVALID", {
    message: `Cannot serve graph "${where}": its factory returned ${
      kind === "factory" ? "a function" : kind.found
    }, not a graph`,
    hint: "A graph factory returns a compiled graph or a StateGraph (sync or async).",
  });
}

/**
 * Whether a compiled graph keeps `messages` with LangGraph's messages reducer (MessagesAnnotation,
 * `createAgent`, deep agents), which reads every message given there with LangChain.
 */
export function keepsChatMessages(graph: CompiledGraph): boolean {
  const operator = (graph?.channels?.messages as { operator?: unknown } | undefined)?.operator;
  // By name as well: a graph built with another copy of LangGraph has its own reducer function.
  return operator === messagesStateReducer ||
    (typeof operator === "function" && operator.name === "messagesStateReducer");
}

/** Lazily loaded graphs by id. */
export class GraphRegistry {
  #loaders: GraphLoaders;
  #cache = new Map<string, Promise<Resolved>>();
  readonly #checkpointer: BaseCheckpointSaver;
  readonly #store: BaseStore;

  constructor(loaders: GraphLoaders, opts: { checkpointer: BaseCheckpointSaver; store: BaseStore }) {
    this.#loaders = { ...loaders };
    this.#checkpointer = new RunCheckpointer(opts.checkpointer);
    this.#store = opts.store;
  }

  ids(): string[] {
    return Object.keys(this.#loaders);
  }

  has(id: string): boolean {
    return Object.hasOwn(this.#loaders, id);
  }

  /**
   * Whether each message given to graph `id` under `messages` must be one LangChain reads:
   * true unless the graph is known (not a factory, loaded) to keep something else there.
   * Loading errors are left to the run that needs the graph.
   */
  async readsChatMessages(id: string): Promise<boolean> {
    if (!this.has(id)) return true;
    try {
      const r = await this.#resolve(id);
      return "graph" in r ? keepsChatMessages(r.graph) : true;
    } catch {
      return true;
    }
  }

  /**
   * The compiled graph of `id`, bound to the server's checkpointer and store. A factory is
   * called with `config` (the run's config; a config naming only the thread for reads).
   */
  async get(id: string, config: FactoryConfig = { configurable: {} }): Promise<CompiledGraph> {
    const r = await this.#resolve(id);
    const graph = "graph" in r ? r.graph : compiled(await r.factory(config), id);
    graph.checkpointer = this.#checkpointer;
    graph.store = this.#store;
    return graph;
  }

  #resolve(id: string): Promise<Resolved> {
    let p = this.#cache.get(id);
    if (!p) {
      const loader = this.#loaders[id];
      if (!loader) {
        throw userError("NOT_FOUND", {
          message: `Cannot find graph "${id}": this server does not serve it`,
          hint: `Graphs served: ${this.ids().map((g) => `"${g}"`).join(", ")}.`,
        });
      }
      p = loader().then((value): Resolved => {
        const kind = graphExportKind(value);
        if (kind === "factory") return { factory: value as (config: FactoryConfig) => unknown };
        if (typeof kind === "object") {
          throw userError("ARGS_INVALID", {
            message: `Cannot serve graph "${id}": its module exports ${kind.found}, not a graph`,
            hint: "Export a compiled graph, a StateGraph, or a function returning one.",
          });
        }
        return { graph: compiled(value, id) };
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
