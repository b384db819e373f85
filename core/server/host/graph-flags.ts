/**
 * The `--graph id=<module>[:<export>]` flags of `dev` and `serve`: parsed from argv, then
 * imported and checked at start, so a wrong one stops the start with the module and what it
 * found rather than failing every run.
 *
 * @example
 * const modules = parseGraphFlags(["echo=./graphs/echo.ts"], process.cwd());
 * const graphs = await loadGraphModules(modules); // { echo: <compiled graph> }
 */
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import {
  agentcliError,
  GraphExportNotGraph,
  GraphFlagIsAgent,
  GraphFlagMalformed,
  GraphFlagRepeated,
  GraphModuleUnloadable,
} from "../../kernel/index.ts";

/** A graph module named by `--graph`: where it is and which export (`graph`, then default, when absent). */
export interface GraphModule {
  path: string;
  exportName?: string;
}

/** The id of the project's agent graph. */
export const AGENT_GRAPH_ID = "agent";

/**
 * Parses repeated `--graph id=<module>[:<export>]` values. The id of the project's agent is
 * refused unless `replaceAgent` (`--replace-agent`); an id given twice is refused.
 */
export function parseGraphFlags(
  values: string[],
  cwd: string,
  opts: { replaceAgent?: boolean } = {},
): Record<string, GraphModule> {
  const out: Record<string, GraphModule> = {};
  for (const v of values) {
    const eq = v.indexOf("=");
    if (eq <= 0 || eq === v.length - 1) {
      throw agentcliError(GraphFlagMalformed, { value: v });
    }
    const id = v.slice(0, eq);
    const target = v.slice(eq + 1);
    if (Object.hasOwn(out, id)) {
      throw agentcliError(GraphFlagRepeated, { id });
    }
    if (id === AGENT_GRAPH_ID && !opts.replaceAgent) {
      throw agentcliError(GraphFlagIsAgent, { id });
    }
    const m = /^(.+?):([A-Za-z_$][\w$]*)$/.exec(target);
    out[id] = m ? { path: resolve(cwd, m[1]!), exportName: m[2] } : { path: resolve(cwd, target) };
  }
  return out;
}

/**
 * Imports the `--graph` modules and checks each export is what langgraph.json accepts (a
 * compiled graph, a StateGraph, or a factory), so a wrong one stops the start with the
 * module and what it found rather than failing every run.
 */
export async function loadGraphModules(modules: Record<string, GraphModule>): Promise<Record<string, unknown>> {
  const { graphExportKind } = await import("../../engine/index.ts");
  const out: Record<string, unknown> = {};
  for (const [id, { path, exportName }] of Object.entries(modules)) {
    let mod: Record<string, unknown>;
    try {
      mod = await import(pathToFileURL(path).href);
    } catch (err) {
      throw agentcliError(GraphModuleUnloadable, { id, path, reason: (err as Error).message.split("\n")[0]! });
    }
    const name = exportName ?? ("graph" in mod ? "graph" : "default");
    const value = mod[name];
    const kind = graphExportKind(value);
    if (typeof kind === "object") {
      const exported = Object.keys(mod).map((k) => `"${k}"`).join(", ") || "nothing";
      throw agentcliError(GraphExportNotGraph, { id, path, name, found: kind.found, exported });
    }
    out[id] = value;
  }
  return out;
}
