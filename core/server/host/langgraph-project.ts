/**
 * What the host serves of a LangGraph.js project (a bundle whose config carries `langgraph`):
 * its graph modules (loaded at start, failing fast), the custom Hono app of `http.app`, the
 * auth module of `auth.path` (handed to the auth middleware as `langgraphAuth`), its default
 * assistants with the graph config of `LANGGRAPH_CONFIG`, and, under `serve`, its sources
 * written out of the bundle to a folder the modules load from.
 *
 * @example
 * const dir = opts.projectDir ?? await writeProjectSources(bundle, { dir: `${dataDir}-project`, packages: null });
 * const modules = langGraphModules(bundle.config.langgraph, dir);
 */
import { lstat, mkdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import process from "node:process";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  agentcliError,
  type Env,
  EnvInvalid,
  type LangGraphConfig,
  LangGraphHttpAppInvalid,
} from "../../kernel/index.ts";
import type { Bundle } from "../../bundle/index.ts";
import type { DefaultAssistant } from "../app.ts";
import type { GraphModule } from "./graph-flags.ts";

/** The graph modules of a langgraph.json, their files under `dir`. */
export function langGraphModules(lg: LangGraphConfig, dir: string): Record<string, GraphModule> {
  return Object.fromEntries(
    Object.entries(lg.graphs).map(([id, g]) => [id, {
      path: join(dir, g.path),
      ...(g.exportName ? { exportName: g.exportName } : {}),
      config: lg.file,
    }]),
  );
}

/** The auth module of `auth.path`, as the host option `langgraphAuth` takes it. */
export function langGraphAuth(lg: LangGraphConfig, dir: string): { module: string; exportName: string } | null {
  return lg.auth ? { module: join(dir, lg.auth.path), exportName: lg.auth.exportName } : null;
}

/**
 * The Hono app of `http.app` (default export when no name is given), mounted before the API
 * as LangGraph mounts it: its routes win a clash, its middleware wraps the API.
 */
export async function loadLangGraphApp(lg: LangGraphConfig, dir: string): Promise<unknown | null> {
  if (!lg.http.app) return null;
  const path = join(dir, lg.http.app.path);
  const name = lg.http.app.exportName ?? "default";
  let app: unknown;
  try {
    app = (await import(pathToFileURL(path).href))[name];
    if (app && typeof (app as { then?: unknown }).then === "function") app = await app;
  } catch (err) {
    const reason = String((err as Error)?.message ?? err).split("\n")[0]!;
    throw agentcliError(LangGraphHttpAppInvalid, { config: lg.file, path, reason });
  }
  const a = app as { fetch?: unknown; routes?: unknown } | null;
  if (!a || typeof a.fetch !== "function" || !Array.isArray(a.routes)) {
    throw agentcliError(LangGraphHttpAppInvalid, {
      config: lg.file,
      path,
      reason: `export "${name}" is not a Hono app (${a === null || a === undefined ? "nothing" : typeof a})`,
    });
  }
  return app;
}

/**
 * The default assistants of a LangGraph.js project: one per graph, named by its id (so its id
 * is LangGraph's), with the config and context `LANGGRAPH_CONFIG` gives it (a JSON object keyed
 * by graph id, as LangGraph's server reads it; `context` is taken out of the config).
 */
export function langGraphAssistants(lg: LangGraphConfig, env: Env): Record<string, DefaultAssistant> {
  const raw = env.LANGGRAPH_CONFIG?.trim();
  let byGraph: Record<string, Record<string, unknown>> = {};
  if (raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = null;
    }
    const isObject = (v: unknown): v is Record<string, unknown> =>
      typeof v === "object" && v !== null && !Array.isArray(v);
    if (!isObject(parsed) || !Object.values(parsed).every(isObject)) {
      throw agentcliError(EnvInvalid, {
        action: "start the server",
        name: "LANGGRAPH_CONFIG",
        value: raw.length > 60 ? `${raw.slice(0, 60)}...` : raw,
        problem: "is not a JSON object of objects keyed by graph id",
        fix:
          'Set it as LangGraph reads it, e.g. {"agent": {"configurable": {"model": "x"}, "context": {}}}, or unset it.',
      });
    }
    byGraph = parsed as Record<string, Record<string, unknown>>;
  }
  return Object.fromEntries(
    Object.entries(lg.graphs).map(([id, g]) => {
      const { context, ...config } = byGraph[id] ?? {};
      return [id, {
        name: id,
        ...(g.description ? { description: g.description } : {}),
        config,
        ...(context !== undefined ? { context: context as Record<string, unknown> } : {}),
      }];
    }),
  );
}

/**
 * Writes a bundle's project files under `dir` (serve: the modules load from there) and links
 * the node_modules of each folder the build installed npm packages for (`packages`, see
 * core/platform/reconciler/packages.ts) into it; returns `dir`. Without packages, a link left
 * by an earlier revision is removed, so the project gets agentcli's lent packages again.
 */
export async function writeProjectSources(
  bundle: Bundle,
  o: { dir: string; packages: string | null },
): Promise<string> {
  const { dir } = o;
  for (const [path, bytes] of bundle.files) {
    const file = join(dir, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
  }
  const units: string[] = o.packages ? JSON.parse(await readFile(join(o.packages, "agentcli-units.json"), "utf8")) : [];
  if (!o.packages) {
    const link = join(dir, "node_modules");
    if ((await lstat(link).catch(() => null))?.isSymbolicLink()) await rm(link);
  }
  for (const unit of units) {
    // A new link beside the old, then renamed over it: a revision still running keeps a valid path.
    const link = join(dir, unit, "node_modules");
    const tmp = `${link}.${process.pid}.tmp`;
    await mkdir(dirname(link), { recursive: true });
    await rm(tmp, { force: true });
    await symlink(join(o.packages!, unit, "node_modules"), tmp, "dir");
    await rename(tmp, link);
  }
  return dir;
}
