/**
 * Loads and validates an agent project (spec 2.1-2.7, 7) and reports every problem of the
 * project in one run: `agent.toml` (syntax with line/column; unknown sections and keys; types;
 * providers known to the plugins), `.env`, `mcp.json` (root and subagents), skills, `user/`,
 * subagents, `approvals.toml`, and the environment variables each provider needs.
 *
 * @example
 * const project = await loadProject("examples/research/agent.toml", { driver, env: process.env, requireEnv: false });
 */
import { dirname, join, resolve } from "node:path";
import { existsSync, statSync } from "node:fs";
import {
  agentcliError,
  ConfigInvalid,
  ConfigInvalidByPlugins,
  ConfigNotFound,
  ConfigUnreadable,
  type Diagnostic,
  type Env,
  EnvInvalid,
  type PluginDriver,
} from "../kernel/index.ts";
import { loadSkills } from "./skills.ts";
import { parseMcpJson } from "./mcp.ts";
import { parseApprovals } from "./approvals.ts";
import { DEFAULT_BUNDLE_MAX_MB, ProjectFiles } from "./project-files.ts";
import type { MissingEnv } from "./credentials.ts";
import { missingEnvOf, missingEnvProblems, projectEnv } from "./load-env.ts";
import { checkProviders, configSections, knownProviders, modelCheck } from "./load-providers.ts";
import { loadSubagents } from "./load-subagents.ts";
import { parseTomlFile } from "./load-toml.ts";
import { type AgentConfig, agentTomlSchema, type McpServerConfig } from "./schema.ts";

export interface LoadedProject {
  root: string;
  configPath: string;
  config: AgentConfig;
  /** Files that go into the bundle, by project-relative path. */
  files: Map<string, Uint8Array>;
  /** `.env` values: deployment secrets. Never print them. */
  secrets: Record<string, string>;
  /** The environment the project runs with: `.env` under the process environment. */
  env: Env;
  /** Problems that do not stop the project from running. */
  warnings: Diagnostic[];
  /** Variables that are not set; errors when `requireEnv`, otherwise each command says what it means. */
  missingEnv: MissingEnv[];
  /**
   * Problems that refuse a deployment but not `dev` (the file is left out of the bundle): a
   * registry settings file with a credential in clear (../kernel/registry-files.ts).
   */
  deployProblems?: Diagnostic[];
}

export interface LoadOptions {
  driver: PluginDriver;
  env: Env;
  /** When true (deploy), missing variables are errors; otherwise (dev, dry-run) warnings. */
  requireEnv: boolean;
  /** Base for file names in messages (default: the current directory). */
  cwd?: string;
}

/** What a project's parts are read with: problems go to `report`, files for the bundle to `take`. */
interface Reading {
  files: ProjectFiles;
  report: (d: Diagnostic) => void;
  take: (path: string) => void;
}

/** Loads the project whose config file is `configPath`; throws one error listing every problem. */
export async function loadProject(configPath: string, opts: LoadOptions): Promise<LoadedProject> {
  const cwd = opts.cwd ?? ".";
  // A directory means the project in it: `--config examples/research` is `examples/research/agent.toml`.
  const given = resolve(cwd, configPath);
  const absConfig = projectConfigPath(given);
  if (absConfig.endsWith(".json")) {
    const { loadLangGraphProject } = await import("./langgraph-json.ts");
    return loadLangGraphProject(absConfig, { env: opts.env, cwd: resolve(cwd), maxBytes: bundleMaxBytes(opts.env) });
  }
  const root = dirname(absConfig);
  const files = new ProjectFiles(root, resolve(cwd), { maxBytes: bundleMaxBytes(opts.env) });
  const configName = absConfig.slice(root.length + 1);
  const tomlText = readConfig({ files, configName, configPath, absConfig });
  const problems: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const report = (d: Diagnostic) => problems.push(d);
  const { secrets, env } = projectEnv(files, opts.env, report);

  const bundleFiles = new Map<string, Uint8Array>();
  const take = (path: string) => {
    const bytes = files.readForBundle(path);
    if (bytes) bundleFiles.set(path, bytes);
  };
  const reading: Reading = { files, report, take };

  const tomlBytes = files.readForBundle(configName);
  if (tomlBytes) bundleFiles.set("agent.toml", tomlBytes);
  const tomlFile = files.display(configName);
  const toml = parseTomlFile({ text: tomlText, file: tomlFile, schema: agentTomlSchema, report });
  takeInstructions(reading);

  const providers = knownProviders(opts.driver);
  const checkModel = modelCheck(providers, report);
  const sandboxSpec = checkProviders({ raw: toml.raw, tomlFile, tomlText }, providers, {
    report,
    warnings,
    checkModel,
  });
  const t = toml.data;
  const { sandbox, auth, frontend } = configSections(t, sandboxSpec);
  const parts = loadParts(reading, { env, sandbox: sandbox.provider !== "none" });
  const subagents = loadSubagents(files, {
    report,
    env,
    mcpServers: Object.keys(parts.mcp),
    sandbox: sandbox.provider !== "none",
    checkModel,
    take,
  });

  // Credentials and provider variables (spec 2.6).
  const { model, missingEnv } = t
    ? missingEnvOf({
      driver: opts.driver,
      providers,
      env,
      model: t.agent.model ?? null,
      subagents,
      sandbox,
      auth,
      frontend,
    })
    : { model: null, missingEnv: [] };
  if (opts.requireEnv) problems.push(...missingEnvProblems(missingEnv, files));

  problems.push(...files.problems);
  if (problems.length) {
    throw agentcliError(ConfigInvalid, { path: files.display(configName), count: problems.length }, {
      diagnostics: problems,
    });
  }

  const config = await afterPlugins({
    config: {
      agent: { name: t!.agent.name, description: t!.agent.description ?? "", model },
      sandbox,
      auth,
      frontend,
      skills: parts.skills,
      user: { enabled: parts.userEnabled },
      mcp: parts.mcp,
      approvals: parts.approvals,
      subagents,
    },
    opts,
    root,
    env,
    path: files.display(configName),
  });
  return { root, configPath: absConfig, config, files: bundleFiles, secrets, env, warnings, missingEnv };
}

/** The text of agent.toml; throws when it is missing or cannot be read. */
function readConfig(
  { files, configName, configPath, absConfig }: {
    files: ProjectFiles;
    configName: string;
    configPath: string;
    absConfig: string;
  },
): string {
  if (!existsSync(absConfig)) {
    throw agentcliError(ConfigNotFound, { path: files.display(configName), given: configPath !== "agent.toml" });
  }
  const tomlText = files.readText(configName);
  if (tomlText === null && files.problems.length) {
    throw agentcliError(ConfigInvalid, { path: files.display(configName), count: 1 }, { diagnostics: files.problems });
  }
  if (tomlText === null) {
    throw agentcliError(ConfigUnreadable, { path: files.display(configName) });
  }
  return tomlText;
}

/** AGENTS.md, the agent's instructions: required. */
function takeInstructions({ files, report, take }: Reading): void {
  if (!files.exists("AGENTS.md")) {
    report({
      file: files.display("AGENTS.md"),
      message: "is missing: the agent's instructions are required",
      hint: "Create AGENTS.md beside agent.toml with the system prompt.",
    });
  } else take("AGENTS.md");
}

/** The main agent's mcp.json, skills, user/ and approvals.toml, and the checks of the folders' shapes. */
function loadParts(
  { files, report, take }: Reading,
  ctx: { env: Env; sandbox: boolean },
): { mcp: Record<string, McpServerConfig>; skills: AgentConfig["skills"]; userEnabled: boolean; approvals: string[] } {
  const mcpText = files.readText("mcp.json");
  const mcp = mcpText === null
    ? {}
    : parseMcpJson({ text: mcpText, file: files.display("mcp.json"), env: ctx.env, report });
  if (mcpText !== null) take("mcp.json");

  const skills = loadSkills(files, "skills", report);
  for (const s of skills) files.walk(s.path).forEach(take);
  if (files.exists("skills") && !files.isDirectory("skills")) {
    report({
      file: files.display("skills"),
      message: "must be a directory",
      hint: "Put skills in skills/<name>/SKILL.md.",
    });
  }

  const userEnabled = files.isDirectory("user");
  if (userEnabled) files.walk("user").forEach(take);
  if (files.kind("user") === "file") {
    report({
      file: files.display("user"),
      message: "must be a directory",
      hint: "Make user/ a folder (optionally with user/AGENTS.md as the template of each user's memory).",
    });
  }
  if (files.kind("user/AGENTS.md") === "directory") {
    report({
      file: files.display("user/AGENTS.md"),
      message: "is a directory; a file is expected here",
      hint: "Make user/AGENTS.md a file: the template of each user's memory.",
    });
  }
  if (files.kind("subagents") === "file") {
    report({
      file: files.display("subagents"),
      message: "must be a directory",
      hint: "Put each subagent in its own folder: subagents/<name>/agent.toml and AGENTS.md.",
    });
  }

  const approvalsText = files.readText("approvals.toml");
  const approvals = approvalsText === null ? [] : parseApprovals({
    text: approvalsText,
    file: files.display("approvals.toml"),
    mcpServers: Object.keys(mcp),
    sandbox: ctx.sandbox,
    report,
  });
  if (approvalsText !== null) take("approvals.toml");
  return { mcp, skills, userEnabled, approvals };
}

/** The config after the plugins' `config:load` hooks; throws with what they reported. */
async function afterPlugins(
  { config, opts, root, env, path }: { config: AgentConfig; opts: LoadOptions; root: string; env: Env; path: string },
): Promise<AgentConfig> {
  const hookProblems: Diagnostic[] = [];
  const after = await opts.driver.runSequential("config:load", {
    config,
    projectDir: root,
    env,
    report: (d) => hookProblems.push(d),
  }, "config");
  if (hookProblems.length) {
    throw agentcliError(ConfigInvalidByPlugins, { path, count: hookProblems.length }, {
      diagnostics: hookProblems,
    });
  }
  return after.config;
}

/** `AGENTCLI_BUNDLE_MAX_MB`: the most the project's files may add up to in a bundle (default 100 MiB). */
export function bundleMaxBytes(env: Env): number {
  const raw = env.AGENTCLI_BUNDLE_MAX_MB?.trim();
  if (!raw) return DEFAULT_BUNDLE_MAX_MB * 1024 * 1024;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 1024 * 1024) {
    throw agentcliError(EnvInvalid, {
      action: "load project",
      name: "AGENTCLI_BUNDLE_MAX_MB",
      value: raw,
      problem: "is not a positive number of MiB",
      fix: `Set it to the MiB a bundle's files may add up to, or unset it for the default (${DEFAULT_BUNDLE_MAX_MB}).`,
    });
  }
  return Math.floor(n * 1024 * 1024);
}

/**
 * The config file a path means: a file as given; a directory's agent.toml, else its
 * langgraph.json (a LangGraph.js project); a missing agent.toml beside a langgraph.json, that.
 */
function projectConfigPath(given: string): string {
  const dir = isDirectory(given) ? given : given.endsWith("/agent.toml") ? dirname(given) : null;
  if (dir === null) return given;
  const toml = join(dir, "agent.toml");
  const langgraph = join(dir, "langgraph.json");
  return !existsSync(toml) && existsSync(langgraph) ? langgraph : isDirectory(given) ? toml : given;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
