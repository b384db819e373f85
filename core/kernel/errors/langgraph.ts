/**
 * The error catalogue: LangGraph.js projects (GRAPH_INVALID, CONFIG_INVALID): the modules a
 * `langgraph.json` names. Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** A graph module of langgraph.json that fails to import; `reason` is the first line of its error. */
export const LangGraphGraphUnloadable = {
  name: "LangGraphGraphUnloadable",
  code: "GRAPH_INVALID",
  title: "A graph module named by langgraph.json does not load.",
  message: (v: { config: string; id: string; path: string; reason: string }) =>
    `Cannot load graph "${v.id}" of ${v.config} from ${v.path}: ${v.reason}`,
  hint:
    'Check the path in "graphs" (relative to langgraph.json) and that the module and its imports load. A package the module imports is the project\'s to install: under `agentcli dev` run `npm install` in the project first, as dev loads the packages the project installed and lends only @langchain/*, langchain, hono and zod; a control plane installs the "dependencies" of langgraph.json at build.',
} as const satisfies ErrorData;

/** A graph module of langgraph.json whose export is not a graph (after awaiting a Promise). */
export const LangGraphExportNotGraph = {
  name: "LangGraphExportNotGraph",
  code: "GRAPH_INVALID",
  title: "A graph module named by langgraph.json does not export a graph.",
  message: (v: { config: string; id: string; path: string; name: string; found: string; exported: string }) =>
    `Cannot serve graph "${v.id}" of ${v.config}: ${v.path} export "${v.name}" is ${v.found}, not a graph (the module exports ${v.exported})`,
  hint:
    'Export a compiled graph, a StateGraph, a Promise of one, or a (async) function taking the run config and returning one; name the export with "<path>:<export>".',
} as const satisfies ErrorData;

/** The module `http.app` names does not load or does not export a Hono app. */
export const LangGraphHttpAppInvalid = {
  name: "LangGraphHttpAppInvalid",
  code: "CONFIG_INVALID",
  title: "The custom HTTP app (http.app of langgraph.json) does not load or is not a Hono app.",
  message: (v: { config: string; path: string; reason: string }) =>
    `Cannot mount http.app of ${v.config} from ${v.path}: ${v.reason}`,
  hint: 'Export a Hono app (new Hono()) from the module and name it in http.app as "./path.ts:app".',
} as const satisfies ErrorData;

/** A LangGraph.js project needs npm packages that the deploy target does not install (a control plane installs them). */
export const LangGraphPackagesUnprovided = {
  name: "LangGraphPackagesUnprovided",
  code: "DEPLOY_FAILED",
  title: "A LangGraph.js project to deploy depends on packages the deploy target does not install.",
  message: (v: { config: string; packages: string[]; target: string }) =>
    `Cannot deploy the project of ${v.config} to "${v.target}": its dependencies need ${
      v.packages.map((p) => `"${p}"`).join(", ")
    }, which this target does not install (it lends a project only agentcli's own @langchain/*, langchain, hono and zod)`,
  hint:
    'Deploy to a control plane (--target platform), whose build installs the "dependencies" of langgraph.json with npm, or remove those packages from package.json, putting the code the graphs need among the project\'s sources.',
} as const satisfies ErrorData;

/** Inside the single executable, an import of a lent package's entry point the executable does not bundle. */
export const LangGraphPackageEntryUnprovided = {
  name: "LangGraphPackageEntryUnprovided",
  code: "GRAPH_INVALID",
  title: "A project module imports an entry point of a lent package that the single executable does not include.",
  message: (v: { specifier: string; lent: string[] }) =>
    `Cannot import "${v.specifier}": the project does not install it, and the agentcli executable lends ${
      v.lent.length
        ? `only ${v.lent.map((s) => `"${s}"`).join(", ")} of that package`
        : "no entry point of that package"
    }`,
  hint:
    "Import one of the entry points listed (docs/executables.md), or install the package in the project (npm install), or run agentcli from npm, which lends every entry point.",
} as const satisfies ErrorData;

/** A module of langgraph.json's `ui` that cannot be built into the components LoadExternalComponent loads. */
export const LangGraphUiInvalid = {
  name: "LangGraphUiInvalid",
  code: "CONFIG_INVALID",
  title: "Generative UI components (ui of langgraph.json) do not build.",
  message: (v: { config: string; namespace: string; path: string; reason: string }) =>
    `Cannot build the UI components "${v.namespace}" of ${v.config} from ${v.path}: ${v.reason}`,
  hint:
    "Export the components by name as the module's default export ({ weather: Weather }); import project files by relative path and packages the page shares (react, react-dom, the SDK).",
} as const satisfies ErrorData;

export const LANGGRAPH_ERRORS: readonly ErrorData[] = [
  LangGraphGraphUnloadable,
  LangGraphExportNotGraph,
  LangGraphHttpAppInvalid,
  LangGraphPackagesUnprovided,
  LangGraphPackageEntryUnprovided,
  LangGraphUiInvalid,
];
