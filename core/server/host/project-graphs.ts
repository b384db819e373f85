/**
 * The graphs a host serves: the project's agent (built from the current bundle on its first
 * run) and the `--graph` modules, with their default assistants. A dev reload closes the
 * agent graphs built so far and hands the server new loaders; MCP connections outlive it in
 * the host's pool.
 *
 * @example
 * const graphs = new ProjectGraphs({ agent: { driver, checkpointer, store, log, sandboxes, mcp }, mcp, workdir, extra, log });
 * await server.reloadGraphs(graphs.loaders(bundle, env), projectAssistants(bundle));
 */
import type { AgentGraphOptions } from "../../harness/index.ts";
import type { Bundle } from "../../bundle/index.ts";
import type { Env, ServerLog } from "../../kernel/index.ts";
import type { GraphLoaders } from "../../engine/index.ts";
import type { DefaultAssistant } from "../app.ts";
import { langGraphAssistants } from "./langgraph-project.ts";

export interface ProjectGraphsOptions {
  /** What every agent graph is built with, besides its bundle, env and sandbox workdir. */
  agent: Omit<AgentGraphOptions, "bundle" | "env" | "sandboxWorkdir">;
  /** The host's MCP pool: swept after each agent graph is built (connections its graph no longer uses close). */
  mcp: { sweep(): Promise<void> };
  /** The working directory of sandbox commands for a bundle (the `--sandbox` runtime's, else its provider's). */
  workdir: (bundle: Bundle) => string | undefined;
  /** The `--graph` graphs (or a LangGraph.js project's) by id, loaded at start. */
  extra: Record<string, unknown>;
  /** Imports a new bundle's graph modules anew, replacing `extra` on a reload (dev, LangGraph.js project). */
  reimport?: (bundle: Bundle) => Promise<Record<string, unknown>>;
  log: ServerLog;
}

/**
 * The default assistant of the project's agent graph (the agent's name and description), or
 * of each graph of a LangGraph.js project (with `LANGGRAPH_CONFIG`'s config from `env`).
 */
export function projectAssistants(bundle: Bundle, env: Env = {}): Record<string, DefaultAssistant> {
  const lg = bundle.config.langgraph;
  if (lg) return langGraphAssistants(lg, env);
  return { agent: { name: bundle.config.agent.name, description: bundle.config.agent.description } };
}

/** The host's graph loaders, and the agent graphs they built (to close on reload and shutdown). */
export class ProjectGraphs {
  readonly #o: ProjectGraphsOptions;
  readonly #live: Array<{ close(): Promise<void> }> = [];
  #extra: Record<string, unknown>;

  constructor(o: ProjectGraphsOptions) {
    this.#o = o;
    this.#extra = o.extra;
  }

  /** Before a reload: imports the new bundle's graph modules anew when the host can (throws, changing nothing, when one does not load). */
  async refresh(bundle: Bundle): Promise<void> {
    if (this.#o.reimport) this.#extra = await this.#o.reimport(bundle);
  }

  /** The loaders of a bundle's graphs: the agent, then each `--graph` (replacing the agent when its id is "agent"). */
  loaders(bundle: Bundle, env: Env): GraphLoaders {
    const o = this.#o;
    // A LangGraph.js project serves its own graphs (the `extra` ones), no deep agent.
    const graphs: Record<string, () => Promise<unknown>> = bundle.config.langgraph ? {} : {
      agent: async () => {
        const { createAgentGraph } = await import("../../harness/index.ts");
        const g = await createAgentGraph({ ...o.agent, bundle, env, sandboxWorkdir: o.workdir(bundle) });
        this.#live.push(g);
        await o.mcp.sweep();
        for (const w of g.warnings) o.log.warn(w);
        return g.graph;
      },
    };
    for (const [id, value] of Object.entries(this.#extra)) graphs[id] = async () => value;
    return graphs;
  }

  /** Closes every agent graph built so far (a failure in one never skips the others). */
  async closeAll(): Promise<void> {
    const old = this.#live.splice(0);
    await Promise.allSettled(old.map((g) => g.close()));
  }
}
