/**
 * The configuration a plugin sees: the normalized `agent.toml` and the project's files
 * (`AgentConfig`), as the `config:load` and `bundle:build` hooks receive it. The kernel holds
 * the type because the hooks name it; core/config/schema.ts validates `agent.toml` with zod,
 * applies the defaults and re-exports these types.
 */

/** One MCP server of `mcp.json` (values keep `${VAR}` references; they are expanded at run time). */
export interface McpServerConfig {
  transport: "http" | "sse";
  url: string;
  headers?: Record<string, string>;
  /** Seconds a call may take before it fails. */
  timeout?: number;
}

export interface SkillInfo {
  name: string;
  description: string;
  /** Directory of the skill inside the bundle, e.g. `skills/review`. */
  path: string;
}

export interface SubagentConfig {
  name: string;
  description: string;
  /** `provider:model`, or null to inherit the main agent's model. */
  model: string | null;
  skills: SkillInfo[];
  /** Own MCP servers; null means the main agent's tools are inherited. */
  mcp: Record<string, McpServerConfig> | null;
  /** Tools needing approval, as in `approvals.toml`; null means none of its own. */
  approvals: string[] | null;
}

/**
 * The normalized configuration of a project: every default applied, every file checked.
 * This is what the bundle carries as `config.json` and what the server and harness read.
 */
export interface AgentConfig {
  agent: { name: string; description: string; model: string | null };
  sandbox: { provider: string; template: string; image: string; scope: "thread" | "assistant" };
  auth: { provider: string } | null;
  frontend: { enabled: boolean; app_name: string; subtitle: string; prompts: string[] };
  skills: SkillInfo[];
  /** Present when the project has `user/`: per-user memory is on. */
  user: { enabled: boolean };
  mcp: Record<string, McpServerConfig>;
  approvals: string[];
  subagents: SubagentConfig[];
  /** A LangGraph.js project (`langgraph.json`) instead of a deep agent: its graphs are served, not `agent`. */
  langgraph?: LangGraphConfig;
}

/** A module export named in langgraph.json as `./path.ts:export`: the path relative to the project. */
export interface LangGraphExport {
  path: string;
  exportName?: string;
}

/** The normalized `langgraph.json` of a LangGraph.js project (docs/langgraph.md). */
export interface LangGraphConfig {
  /** The config file, relative to the project (`langgraph.json`). */
  file: string;
  graphs: Record<string, LangGraphExport & { description?: string }>;
  /** `http.app` (a Hono app mounted before the API) and the `http.disable_*` switches. */
  http: {
    app: LangGraphExport | null;
    disable: { assistants: boolean; threads: boolean; runs: boolean; store: boolean; meta: boolean };
  };
  /** `auth.path`: the module exporting LangGraph's `Auth` instance; `auth.disable_studio_auth`: no Studio bypass. */
  auth: (LangGraphExport & { exportName: string; disableStudioAuth?: boolean }) | null;
  node_version: string | null;
  dependencies: string[];
  /** The npm packages the `dependencies` need: the `dependencies` of their package.json files. */
  packages: string[];
  /** `ui`: each namespace's (graph id's) module of generative UI components, relative to the project. */
  ui?: Record<string, string>;
  /** `env` given as an object: plain values, bundled, put into `process.env` under the environment. */
  env: Record<string, string>;
  /** agentcli settings `store` and `checkpointer` stand for, applied under the environment. */
  settings: Record<string, string>;
}
