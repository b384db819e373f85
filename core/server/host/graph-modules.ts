/**
 * How a user's graph module loads, as LangGraph's JS server loads it: TypeScript transpiled
 * (imports used only as types dropped, `./x.js` naming `./x.ts` resolved), the export awaited
 * when it is a Promise, and LangGraph's SDK logger (`getLogger()` of
 * `@langchain/langgraph-sdk/logging`) registered before any graph module runs, so a graph
 * calling it at import loads.
 *
 * @example
 * await prepareGraphModules({ roots: [projectDir], log });
 * const value = await importGraphExport({ id: "chat", path: "/p/graph.ts", exportName: "graph", config: "langgraph.json" });
 */
import { pathToFileURL } from "node:url";
import { transform } from "sucrase";
import {
  agentcliError,
  GraphExportNotGraph,
  GraphModuleUnloadable,
  LangGraphExportNotGraph,
  LangGraphGraphUnloadable,
  loadTypeScriptUnder,
  type ServerLog,
} from "../../kernel/index.ts";

/** Where LangGraph's SDK looks for the server's logger (`getLogger()`). */
const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** A TypeScript module's JavaScript: types and type-only imports removed, JSX of `.tsx` files compiled. */
export function transpileGraphSource(source: string, file: string): string {
  return transform(source, {
    transforms: file.endsWith(".tsx") ? ["typescript", "jsx"] : ["typescript"],
    jsxRuntime: "automatic",
    disableESTransforms: true,
    filePath: file,
  }).code;
}

/**
 * LangGraph's SDK logger backed by the server's log: the leveled methods of LangGraph's (a
 * winston logger's), each line with its structured fields as JSON.
 */
export function sdkLogger(log: ServerLog): Record<string, (message: unknown, meta?: unknown) => void> {
  const line = (message: unknown, meta: unknown[]) => {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    const fields = meta.filter((m) => m !== undefined);
    return fields.length ? `${text} ${fields.map((f) => JSON.stringify(f)).join(" ")}` : text;
  };
  const at = (write: (m: string) => void) => (message: unknown, ...meta: unknown[]) => write(line(message, meta));
  const info = at((m) => log.info(m));
  return {
    error: at((m) => log.error(m)),
    warn: at((m) => log.warn(m)),
    info,
    http: info,
    verbose: info,
    debug: info,
    silly: info,
    log: (level: unknown, message: unknown, ...meta: unknown[]) =>
      (level === "error" ? at((m) => log.error(m)) : level === "warn" ? at((m) => log.warn(m)) : info)(
        message,
        ...meta,
      ),
  };
}

/**
 * Readies the process to load graph modules under `roots`: TypeScript loading as LangGraph's
 * and the SDK logger. A logger set before (by another server in this process) is kept.
 */
export async function prepareGraphModules(opts: { roots: string[]; log: ServerLog }): Promise<void> {
  for (const root of opts.roots) await loadTypeScriptUnder(root, transpileGraphSource);
  const g = globalThis as Record<symbol, unknown>;
  if (!(SDK_LOGGER in g)) g[SDK_LOGGER] = sdkLogger(opts.log);
}

/** A graph module to import: its id, file, export (`graph`, then default, when absent) and where it was named. */
export interface GraphExportSpec {
  id: string;
  path: string;
  exportName?: string;
  /** The langgraph.json that names it (as shown to the user); absent for a `--graph`. */
  config?: string;
}

/** The first line of an import error. */
function loadReason(err: unknown): string {
  return String((err as { message?: string })?.message ?? err).split("\n")[0]!;
}

/**
 * Imports a graph module and returns its export, awaited when it is a Promise: a compiled
 * graph, a StateGraph or a factory. Anything else, or a module that does not load, is an
 * error naming the graph, the module and the cause.
 */
export async function importGraphExport(spec: GraphExportSpec): Promise<unknown> {
  const { id, path, config } = spec;
  const { graphExportKind } = await import("../../engine/index.ts");
  let mod: Record<string, unknown>;
  let value: unknown;
  const name = () => spec.exportName ?? ("graph" in mod ? "graph" : "default");
  try {
    mod = await import(pathToFileURL(path).href);
    value = mod[name()];
    if (value && typeof (value as { then?: unknown }).then === "function") value = await value;
  } catch (err) {
    const reason = loadReason(err);
    throw config
      ? agentcliError(LangGraphGraphUnloadable, { config, id, path, reason })
      : agentcliError(GraphModuleUnloadable, { id, path, reason });
  }
  const kind = graphExportKind(value);
  if (typeof kind === "object") {
    const exported = Object.keys(mod).map((k) => `"${k}"`).join(", ") || "nothing";
    const v = { id, path, name: name(), found: kind.found, exported };
    throw config ? agentcliError(LangGraphExportNotGraph, { config, ...v }) : agentcliError(GraphExportNotGraph, v);
  }
  return value;
}
