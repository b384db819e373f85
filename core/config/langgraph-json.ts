/**
 * A LangGraph.js project as it is: `langgraph.json` (LangGraph's schema, JS keys) read into a
 * {@link LoadedProject} whose config carries `langgraph` (its graphs served instead of the deep
 * agent). Every problem is reported at once, each naming the file and the key; a key agentcli
 * does not serve (a Python-only key, `ui_config`, or one LangGraph does not know) is an error, never
 * ignored. `store` and `checkpointer` become the agentcli settings they stand for.
 *
 * @example
 * const project = loadLangGraphProject("/p/langgraph.json", { env: process.env, cwd: "/p" });
 */
import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import {
  agentcliError,
  type AgentConfig,
  ConfigInvalid,
  type Diagnostic,
  type Env,
  type LangGraphConfig,
  type LangGraphExport,
  literalCredentials,
  REGISTRY_FILES,
} from "../kernel/index.ts";
import { parseDotenv } from "./dotenv.ts";
import { ProjectFiles } from "./project-files.ts";
import { DEFAULT_FRONTEND_PROMPTS, DEFAULT_FRONTEND_SUBTITLE, DEFAULT_SANDBOX_TEMPLATE } from "./schema.ts";
import type { LoadedProject } from "./load.ts";

/** Keys of langgraph.json that only LangGraph's Python or Docker builds read, or that agentcli does not serve yet. */
const UNSUPPORTED: Record<string, string> = {
  python_version: "a Python key: agentcli serves LangGraph.js projects",
  pip_config_file: "a Python key: agentcli serves LangGraph.js projects",
  pip_installer: "a Python key: agentcli serves LangGraph.js projects",
  dockerfile_lines: "agentcli builds no Docker image: the bundle runs on agentcli's own server",
  image_distro: "agentcli builds no Docker image: the bundle runs on agentcli's own server",
  base_image: "agentcli builds no Docker image: the bundle runs on agentcli's own server",
  ui_config:
    "agentcli builds UI components without a bundler: shared modules come from the page (experimental_loadShare)",
  webhooks: "set webhook rules with agentcli's AGENTCLI_WEBHOOK_* variables (docs/configuration.md)",
  api_version: "agentcli serves its own Agent API version",
  keep_pkg_tools: "a Python key: agentcli serves LangGraph.js projects",
};

/** The oldest Node.js major a project's `node_version` may ask for: agentcli itself needs 22. */
const MIN_NODE_MAJOR = 22;

const exportSpec = z.string().min(1, "must not be empty").regex(
  /^[^:]+(:[A-Za-z_$][\w$]*)?$/,
  'must be "./path/to/module.ts" or "./path/to/module.ts:exportName"',
);
const minutes = z.number().positive("must be a positive number of minutes");

const schema = z.strictObject({
  $schema: z.string().optional(),
  graphs: z.record(
    z.string(),
    z.union([exportSpec, z.strictObject({ path: exportSpec, description: z.string().optional() })]),
  ).refine((g) => Object.keys(g).length > 0, "must name at least one graph"),
  env: z.union([z.string().min(1), z.record(z.string(), z.string())]).optional(),
  dependencies: z.array(z.string()).optional(),
  ui: z.record(z.string(), z.string().min(1, "must not be empty")).optional(),
  node_version: z.string().regex(/^\d+(\.\d+){0,2}$/, 'must be a Node.js major version such as "22"').refine(
    (v) => Number(v.split(".")[0]) >= MIN_NODE_MAJOR,
    `must be ${MIN_NODE_MAJOR} or later: agentcli runs graphs on Node.js ${MIN_NODE_MAJOR}+ (LangGraph's "20" images have no agentcli counterpart)`,
  ).optional(),
  http: z.strictObject({
    app: exportSpec.optional(),
    disable_assistants: z.boolean().optional(),
    disable_threads: z.boolean().optional(),
    disable_runs: z.boolean().optional(),
    disable_store: z.boolean().optional(),
    disable_meta: z.boolean().optional(),
  }).optional(),
  auth: z.strictObject({
    path: exportSpec.regex(/:/, 'must name the export: "./auth.ts:auth"'),
    disable_studio_auth: z.boolean().optional(),
  }).optional(),
  store: z.strictObject({
    index: z.strictObject({
      embed: z.string().regex(/^[a-z][\w-]*:\S+$/, 'must be "provider:model", e.g. "openai:text-embedding-3-small"'),
      dims: z.number().int().positive(),
      fields: z.array(z.string().min(1)).optional(),
    }).optional(),
    ttl: z.strictObject({
      refresh_on_read: z.boolean().optional(),
      default_ttl: minutes.optional(),
      sweep_interval_minutes: minutes.optional(),
    }).optional(),
  }).optional(),
  checkpointer: z.strictObject({
    ttl: z.strictObject({
      strategy: z.literal("delete", { error: 'must be "delete" (the only strategy)' }).optional(),
      default_ttl: minutes.optional(),
      sweep_interval_minutes: minutes.optional(),
    }).optional(),
  }).optional(),
});

type LangGraphJson = z.output<typeof schema>;

/** `./graph.ts:graph` -> `{ path: "graph.ts", exportName: "graph" }`; the path relative to the project. */
function parseExport(spec: string): LangGraphExport {
  const colon = spec.lastIndexOf(":");
  const [path, exportName] = colon > 0 ? [spec.slice(0, colon), spec.slice(colon + 1)] : [spec, undefined];
  const rel = path.replace(/^\.\//, "");
  return exportName ? { path: rel, exportName } : { path: rel };
}

/** The diagnostics of a parsed langgraph.json: its shape, then the keys agentcli does not serve. */
function shapeProblems(raw: unknown, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    for (const key of Object.keys(raw)) {
      if (UNSUPPORTED[key]) {
        out.push({ file, message: `key "${key}" is not supported: ${UNSUPPORTED[key]}`, hint: `Remove "${key}".` });
      }
    }
  }
  const rest = raw && typeof raw === "object" && !Array.isArray(raw)
    ? Object.fromEntries(Object.entries(raw).filter(([k]) => !UNSUPPORTED[k]))
    : raw;
  const parsed = schema.safeParse(rest);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const at = issue.path.map(String).join(".");
      if (issue.code === "unrecognized_keys") {
        for (const k of issue.keys) {
          const key = at ? `${at}.${k}` : k;
          out.push({
            file,
            message: `key "${key}" is not a langgraph.json key agentcli knows`,
            hint: "Remove it, or check its spelling against docs/langgraph.md.",
          });
        }
      } else out.push({ file, message: `${at ? `"${at}" ` : ""}${issue.message}` });
    }
  }
  return out;
}

/** The settings `store` and `checkpointer` stand for (agentcli's variables; the environment wins). */
function settingsOf(j: LangGraphJson): Record<string, string> {
  const s: Record<string, string> = {};
  const index = j.store?.index;
  if (index) {
    s.AGENTCLI_STORE_EMBEDDINGS = index.embed;
    if (index.fields) s.AGENTCLI_STORE_INDEX_FIELDS = index.fields.join(",");
  }
  const ttl = j.store?.ttl;
  if (ttl?.default_ttl) s.AGENTCLI_STORE_TTL_MINUTES = String(ttl.default_ttl);
  if (ttl?.refresh_on_read !== undefined) s.AGENTCLI_STORE_TTL_REFRESH_ON_READ = String(ttl.refresh_on_read);
  const sweep = j.checkpointer?.ttl?.sweep_interval_minutes ?? ttl?.sweep_interval_minutes;
  if (sweep) s.AGENTCLI_TTL_SWEEP_SECONDS = String(Math.round(sweep * 60));
  if (j.checkpointer?.ttl?.default_ttl) s.AGENTCLI_THREAD_TTL_MINUTES = String(j.checkpointer.ttl.default_ttl);
  return s;
}

/** The normalized config of a valid langgraph.json; module files that do not exist are problems. */
function normalize(j: LangGraphJson, o: { files: ProjectFiles; file: string; report: (d: Diagnostic) => void }) {
  const check = (key: string, e: LangGraphExport) => {
    if (!o.files.exists(e.path) || o.files.isDirectory(e.path)) {
      o.report({ file: o.file, message: `"${key}" names ${e.path}, which is not a file of the project` });
    }
    return e;
  };
  const graphs: LangGraphConfig["graphs"] = {};
  for (const [id, g] of Object.entries(j.graphs)) {
    const spec = typeof g === "string" ? { path: g } : g;
    graphs[id] = {
      ...check(`graphs.${id}`, parseExport(spec.path)),
      ...(spec.description ? { description: spec.description } : {}),
    };
  }
  const auth = j.auth
    ? {
      ...check("auth.path", parseExport(j.auth.path)) as LangGraphExport & { exportName: string },
      ...(j.auth.disable_studio_auth ? { disableStudioAuth: true } : {}),
    }
    : null;
  const h = j.http ?? {};
  const config: LangGraphConfig = {
    file: o.file,
    graphs,
    http: {
      app: h.app ? check("http.app", parseExport(h.app)) : null,
      disable: {
        assistants: h.disable_assistants ?? false,
        threads: h.disable_threads ?? false,
        runs: h.disable_runs ?? false,
        store: h.disable_store ?? false,
        meta: h.disable_meta ?? false,
      },
    },
    auth,
    node_version: j.node_version ?? null,
    dependencies: j.dependencies ?? ["."],
    packages: packagesOf(j.dependencies ?? ["."], o),
    ui: Object.fromEntries(
      Object.entries(j.ui ?? {}).map(([id, path]) => [id, check(`ui.${id}`, parseExport(path)).path]),
    ),
    env: typeof j.env === "object" ? j.env : {},
    settings: settingsOf(j),
  };
  return config;
}

/**
 * The npm packages `dependencies` stand for: a local folder (`.`, `./lib`) gives the
 * `dependencies` of its package.json, anything else is a package name, as LangGraph's build
 * installs them.
 */
function packagesOf(deps: string[], o: { files: ProjectFiles; file: string; report: (d: Diagnostic) => void }) {
  const out = new Set<string>();
  for (const dep of deps) {
    if (!/^\.{1,2}(\/|$)/.test(dep)) {
      out.add(dep.replace(/(.)@[^@/]*$/, "$1"));
      continue;
    }
    const dir = dep.replace(/^\.\/?/, "").replace(/\/$/, "");
    const manifest = dir ? `${dir}/package.json` : "package.json";
    const text = o.files.readText(manifest);
    if (text === null) continue;
    try {
      const parsed = JSON.parse(text) as { dependencies?: Record<string, string> };
      for (const name of Object.keys(parsed.dependencies ?? {})) out.add(name);
    } catch (err) {
      o.report({ file: o.files.display(manifest), message: `is not valid JSON (${(err as Error).message})` });
    }
  }
  return [...out].sort();
}

/** `env`: a file (its values are the deployment's secrets) or an object (plain settings, bundled). */
function projectEnvOf(j: LangGraphJson | null, o: { files: ProjectFiles; file: string; processEnv: Env }) {
  const problems: Diagnostic[] = [];
  let secrets: Record<string, string> = {};
  let plain: Record<string, string> = {};
  const envFile = typeof j?.env === "string" ? j.env.replace(/^\.\//, "") : null;
  if (envFile) {
    const text = o.files.readText(envFile);
    if (text === null) {
      problems.push({ file: o.file, message: `"env" names ${envFile}, which is not a file of the project` });
    } else {
      const parsed = parseDotenv(text, o.files.display(envFile));
      problems.push(...parsed.problems);
      secrets = Object.fromEntries(Object.entries(parsed.values).filter(([, v]) => v !== ""));
    }
  } else if (j?.env && typeof j.env === "object") plain = j.env;
  const defined = Object.fromEntries(Object.entries(o.processEnv).filter(([, v]) => v !== undefined));
  return { secrets, envFile, env: { ...plain, ...secrets, ...defined } as Env, problems };
}

/** The project's files for the bundle: everything but node_modules, dotfiles, agentcli's data and the env file. */
function projectSources(files: ProjectFiles, o: { root: string; skip: Set<string> }): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  // node_modules is left out before it is looked at (it may be a link out of the project).
  for (const name of readdirSync(o.root).sort()) {
    if (name === "node_modules" || name.startsWith(".") || o.skip.has(name)) continue;
    const kind = files.kind(name);
    if (kind !== "file" && kind !== "directory") continue;
    for (const p of kind === "directory" ? files.walk(name) : [name]) {
      if (p.split("/").includes("node_modules") || o.skip.has(p)) continue;
      const bytes = files.readForBundle(p);
      if (bytes) out.set(p, bytes);
    }
  }
  return out;
}

/**
 * The registry settings (`.npmrc`, `.yarnrc`, `.yarnrc.yml`) of each local folder of
 * `dependencies`, added to the bundle's sources; a credential written in clear is a problem.
 */
function registrySettings(
  files: ProjectFiles,
  o: { deps: string[]; sources: Map<string, Uint8Array>; report: (d: Diagnostic) => void },
): void {
  for (const dep of o.deps) {
    if (!/^\.{1,2}(\/|$)/.test(dep)) continue;
    const dir = dep.replace(/^\.\/?/, "").replace(/\/+$/, "");
    for (const name of REGISTRY_FILES) {
      const path = dir ? `${dir}/${name}` : name;
      if (o.sources.has(path) || files.kind(path) !== "file") continue;
      const bytes = files.readForBundle(path);
      if (!bytes) continue;
      const found = literalCredentials(name, new TextDecoder().decode(bytes));
      for (const { line, key } of found) {
        o.report({
          file: files.display(path),
          line,
          message: `holds a credential in clear ("${key}"): deploy refuses to put it in the bundle`,
          hint:
            `Write a variable instead ("\${NPM_TOKEN}") and give it to the deployment as a secret (the "env" file of langgraph.json).`,
        });
      }
      if (!found.length) o.sources.set(path, bytes);
    }
  }
}

/** The deep-agent parts a LangGraph.js project has none of. */
function agentConfig(name: string, langgraph: LangGraphConfig): AgentConfig {
  return {
    agent: { name, description: "", model: null },
    sandbox: { provider: "none", template: DEFAULT_SANDBOX_TEMPLATE, image: "python:3", scope: "thread" },
    auth: null,
    frontend: {
      enabled: false,
      app_name: name,
      subtitle: DEFAULT_FRONTEND_SUBTITLE,
      prompts: DEFAULT_FRONTEND_PROMPTS,
    },
    skills: [],
    user: { enabled: false },
    mcp: {},
    approvals: [],
    subagents: [],
    langgraph,
  };
}

/** The project's name: package.json's `name` (unscoped), else the folder's. */
function projectName(files: ProjectFiles, root: string): string {
  let name = "";
  try {
    name = String(JSON.parse(files.readText("package.json") ?? "{}").name ?? "");
  } catch { /* no name there */ }
  name = (name.split("/").pop() || root.split("/").pop() || "langgraph").replace(/[^A-Za-z0-9 _.-]/g, "-");
  return name.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "") || "langgraph";
}

/** Loads a LangGraph.js project from its langgraph.json; throws one error listing every problem. */
export function loadLangGraphProject(
  configPath: string,
  opts: { env: Env; cwd: string; maxBytes: number },
): LoadedProject {
  const root = dirname(configPath);
  const files = new ProjectFiles(root, opts.cwd, { maxBytes: opts.maxBytes });
  const name = configPath.slice(root.length + 1);
  const file = files.display(name);
  const problems: Diagnostic[] = [];
  const text = files.readText(name);
  let raw: unknown = null;
  try {
    raw = text === null ? null : JSON.parse(text);
  } catch (err) {
    problems.push({ file, message: `is not valid JSON (${(err as Error).message})` });
  }
  if (text !== null && raw !== null) problems.push(...shapeProblems(raw, file));
  const json = problems.length ? null : schema.parse(raw);
  const env = projectEnvOf(json, { files, file, processEnv: opts.env });
  problems.push(...env.problems);
  const langgraph = json ? normalize(json, { files, file, report: (d) => problems.push(d) }) : null;
  const sources = langgraph
    ? projectSources(files, { root, skip: new Set(env.envFile ? [env.envFile] : []) })
    : new Map();
  const deployProblems: Diagnostic[] = [];
  if (langgraph) {
    registrySettings(files, {
      deps: langgraph.dependencies,
      sources,
      report: (d) => deployProblems.push(d),
    });
  }
  problems.push(...files.problems);
  if (problems.length || !langgraph) {
    throw agentcliError(ConfigInvalid, { path: file, count: Math.max(problems.length, 1) }, { diagnostics: problems });
  }
  return {
    root,
    configPath,
    config: agentConfig(projectName(files, root), langgraph),
    files: sources,
    secrets: env.secrets,
    env: { ...langgraph.settings, ...env.env },
    warnings: deployProblems,
    missingEnv: [],
    deployProblems,
  };
}
