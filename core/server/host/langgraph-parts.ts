/** A LangGraph.js project's part of the host: its options, graph modules, http.app and UI components. */
import { resolve } from "node:path";
import { renewSourceModules } from "../../kernel/index.ts";
import type { Bundle } from "../../bundle/index.ts";
import { loadGraphModules } from "./graph-flags.ts";
import type { HostOptions } from "./agent-host.ts";

/**
 * A LangGraph.js project's graph modules (with the `--graph` ones), the folder they load from,
 * its http.app and its UI components (`/ui`, served from the builds of the last start or reload).
 */
export async function langGraphParts(opts: HostOptions) {
  const lg = opts.bundle.config.langgraph;
  if (!lg) return null;
  const { langGraphModules, loadLangGraphApp, writeProjectSources } = await import("./langgraph-project.ts");
  const { buildGraphUis, graphUiRoutes } = await import("./graph-ui.ts");
  const dir = opts.projectDir ??
    await writeProjectSources(opts.bundle, { dir: `${opts.dataDir}-project`, packages: opts.packagesDir ?? null });
  const ui = { builds: {} as ReturnType<typeof buildGraphUis> };
  return {
    modules: { ...langGraphModules(lg, dir), ...opts.extraGraphs },
    roots: [dir],
    app: () => loadLangGraphApp(lg, dir),
    // dev (the sources in the project folder): a reload imports the changed graph modules anew.
    reimport: opts.projectDir
      ? async (bundle: Bundle) => {
        const next = bundle.config.langgraph!;
        renewSourceModules();
        const modules = { ...langGraphModules(next, dir), ...opts.extraGraphs };
        const graphs = await loadGraphModules(modules, { log: opts.log, roots: [dir] });
        ui.builds = buildGraphUis({ ui: next.ui ?? {}, dir, config: next.file });
        return graphs;
      }
      : null,
    graphUi: () => {
      ui.builds = buildGraphUis({ ui: lg.ui ?? {}, dir, config: lg.file });
      return graphUiRoutes(() => ui.builds);
    },
  };
}

/**
 * A LangGraph.js project's host options: its store and checkpointer settings under the
 * environment, its auth module. Its env goes into process.env too, where graph modules read it
 * (as LangGraph's server does).
 */
export function withLangGraphProject(given: HostOptions): HostOptions {
  const lg = given.bundle.config.langgraph;
  const opts: HostOptions = lg
    ? {
      ...given,
      // langgraph.json's env object is bundled; under serve it is not in the deployment's environment.
      env: { ...lg.settings, ...lg.env, ...given.env },
      ...(lg.auth && !given.langgraphAuth
        ? {
          langgraphAuth: {
            module: resolve(given.projectDir ?? `${given.dataDir}-project`, lg.auth.path),
            exportName: lg.auth.exportName,
            // LangGraph Studio's bypass trusts a header: under `dev` (loopback) only, as LangGraph's dev server.
            studioBypass: given.mode === "dev" && !lg.auth.disableStudioAuth,
          },
        }
        : {}),
    }
    : given;
  if (lg) {
    for (const [k, v] of Object.entries(opts.env)) {
      if (process.env[k] === undefined && v !== undefined) process.env[k] = v;
    }
  }
  return opts;
}
