/**
 * The `--graph id=<module>[:<export>]` flags of `dev` and `serve`: parsed from argv, then
 * imported and checked at start, so a wrong one stops the start with the module and what it
 * found rather than failing every run.
 *
 * @example
 * const modules = parseGraphFlags(["echo=./graphs/echo.ts"], process.cwd());
 * const graphs = await loadGraphModules(modules); // { echo: <compiled graph> }
 */
import { dirname, resolve } from "node:path";
import {
  agentcliError,
  consoleLog,
  GraphFlagIsAgent,
  GraphFlagMalformed,
  GraphFlagRepeated,
  type ServerLog,
} from "../../kernel/index.ts";

/** A graph module named by `--graph`: where it is and which export (`graph`, then default, when absent). */
export interface GraphModule {
  path: string;
  exportName?: string;
  /** The langgraph.json naming it (as shown in errors); absent for a `--graph`. */
  config?: string;
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
 * Imports graph modules (`--graph`, or a langgraph.json's `graphs`) as LangGraph's loader
 * does (graph-modules.ts: TypeScript, Promise exports, the SDK logger) and checks each export
 * is what langgraph.json accepts (a compiled graph, a StateGraph, or a factory), so a wrong one
 * stops the start with the module and what it found rather than failing every run. `roots`:
 * folders whose TypeScript loads as LangGraph's (default: each module's folder).
 */
export async function loadGraphModules(
  modules: Record<string, GraphModule>,
  opts: { log?: ServerLog; roots?: string[] } = {},
): Promise<Record<string, unknown>> {
  const entries = Object.entries(modules);
  if (!entries.length) return {};
  const { importGraphExport, prepareGraphModules } = await import("./graph-modules.ts");
  await prepareGraphModules({
    roots: opts.roots ?? [...new Set(entries.map(([, m]) => dirname(m.path)))],
    log: opts.log ?? consoleLog("graph"),
  });
  const out: Record<string, unknown> = {};
  for (const [id, m] of entries) out[id] = await importGraphExport({ id, ...m });
  return out;
}
