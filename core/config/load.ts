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
import { parse as parseToml, TomlError } from "smol-toml";
import type { z } from "zod";
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
import { parseDotenv } from "./dotenv.ts";
import { loadSkills } from "./skills.ts";
import { parseMcpJson } from "./mcp.ts";
import { parseApprovals } from "./approvals.ts";
import { DEFAULT_BUNDLE_MAX_MB, ProjectFiles } from "./project-files.ts";
import { PLATFORM_DEFAULT_PROVIDER } from "../auth/index.ts";
import { locateTomlKey, tomlSyntaxMessage } from "./toml-locate.ts";
import {
  defaultChainVariables,
  defaultModel,
  describeMissing,
  type MissingEnv,
  missingForModel,
  missingForProvider,
  missingSandboxEnv,
} from "./credentials.ts";
import {
  type AgentConfig,
  agentTomlSchema,
  ALLOWED_SECTIONS,
  DEFAULT_FRONTEND_PROMPTS,
  DEFAULT_FRONTEND_SUBTITLE,
  DEFAULT_SANDBOX_TEMPLATE,
  type McpServerConfig,
  MODEL_RE,
  type SubagentConfig,
  subagentTomlSchema,
} from "./schema.ts";

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
}

export interface LoadOptions {
  driver: PluginDriver;
  env: Env;
  /** When true (deploy), missing variables are errors; otherwise (dev, dry-run) warnings. */
  requireEnv: boolean;
  /** Base for file names in messages (default: the current directory). */
  cwd?: string;
}

/** Loads the project whose config file is `configPath`; throws one error listing every problem. */
export async function loadProject(configPath: string, opts: LoadOptions): Promise<LoadedProject> {
  const cwd = opts.cwd ?? ".";
  // A directory means the project in it: `--config examples/research` is `examples/research/agent.toml`.
  const given = resolve(cwd, configPath);
  const absConfig = isDirectory(given) ? join(given, "agent.toml") : given;
  const root = dirname(absConfig);
  const files = new ProjectFiles(root, resolve(cwd), { maxBytes: bundleMaxBytes(opts.env) });
  const configName = absConfig.slice(root.length + 1);
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
  const problems: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const report = (d: Diagnostic) => problems.push(d);

  const dotenv = files.readText(".env");
  const secrets = dotenv === null ? {} : parseDotenv(dotenv, files.display(".env"));
  if (dotenv !== null) (secrets as { problems: Diagnostic[] }).problems.forEach(report);
  const secretValues = dotenv === null ? {} : Object.fromEntries(
    Object.entries((secrets as { values: Record<string, string> }).values).filter(([, v]) => v !== ""),
  );
  const env: Env = {
    ...secretValues,
    ...Object.fromEntries(Object.entries(opts.env).filter(([, v]) => v !== undefined)),
  };

  const bundleFiles = new Map<string, Uint8Array>();
  const take = (path: string) => {
    const bytes = files.readForBundle(path);
    if (bytes) bundleFiles.set(path, bytes);
  };

  const tomlBytes = files.readForBundle(configName);
  if (tomlBytes) bundleFiles.set("agent.toml", tomlBytes);
  const toml = parseTomlFile(tomlText, files.display(configName), agentTomlSchema, report);

  if (!files.exists("AGENTS.md")) {
    report({
      file: files.display("AGENTS.md"),
      message: "is missing: the agent's instructions are required",
      hint: "Create AGENTS.md beside agent.toml with the system prompt.",
    });
  } else take("AGENTS.md");

  const sandboxProviders = opts.driver.specs("sandbox");
  // The platform-key plugin is the default without [auth], not a choice for [auth].provider.
  const identityProviders = opts.driver.specs("identity").filter((p) => p.provider !== PLATFORM_DEFAULT_PROVIDER);
  const modelPrefixes = opts.driver.specs("model").map((s) => s.prefix);
  const tomlFile = files.display(configName);

  const checkModel = (model: string | undefined, file: string, text: string) => {
    if (!model || !MODEL_RE.test(model)) return; // the schema reports the format
    const prefix = model.slice(0, model.indexOf(":"));
    if (!modelPrefixes.includes(prefix)) {
      report({
        file,
        line: locateTomlKey(text, ["agent", "model"]),
        message: `[agent].model "${model}" uses unknown provider "${prefix}"`,
        hint: `Known providers: ${modelPrefixes.join(", ")}; or load a model plugin with --plugin.`,
      });
    }
  };

  // Provider checks read the raw document too, so they are reported alongside schema errors.
  const raw = toml.raw as {
    agent?: Record<string, unknown>;
    sandbox?: Record<string, unknown>;
    auth?: Record<string, unknown>;
    frontend?: Record<string, unknown>;
  } | null;
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  checkModel(str(raw?.agent?.model), tomlFile, tomlText);
  const rawSandboxProvider = str(raw?.sandbox?.provider) ?? "none";
  const sandboxSpec = sandboxProviders.find((p) => p.provider === rawSandboxProvider);
  if (!sandboxSpec) {
    report({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["sandbox", "provider"]),
      message: `[sandbox].provider "${rawSandboxProvider}" is not a known sandbox provider`,
      hint: `Use one of ${sandboxProviders.map((p) => `"${p.provider}"`).join(", ")}.`,
    });
  } else if (sandboxSpec.beta) {
    warnings.push({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["sandbox", "provider"]),
      message: `sandbox provider "${sandboxSpec.provider}" is in private beta`,
    });
  }
  const rawAuthProvider = str(raw?.auth?.provider);
  if (rawAuthProvider && !identityProviders.some((p) => p.provider === rawAuthProvider)) {
    report({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["auth", "provider"]),
      message: `[auth].provider "${rawAuthProvider}" is not a known identity provider`,
      hint: `Use one of ${identityProviders.map((p) => `"${p.provider}"`).join(", ")}.`,
    });
  }
  if (raw?.frontend?.enabled === true && raw.auth === undefined) {
    report({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["frontend", "enabled"]) ?? locateTomlKey(tomlText, ["frontend"]),
      message: "[frontend].enabled = true requires an [auth] section",
      hint: `Add [auth] with provider = one of ${identityProviders.map((p) => `"${p.provider}"`).join(", ")}.`,
    });
  }

  const t = toml.data;
  const sandbox: AgentConfig["sandbox"] = {
    provider: t?.sandbox?.provider ?? "none",
    template: t?.sandbox?.template ?? sandboxSpec?.defaultTemplate ?? DEFAULT_SANDBOX_TEMPLATE,
    image: t?.sandbox?.image ?? "python:3",
    scope: t?.sandbox?.scope ?? "thread",
  };
  const auth: AgentConfig["auth"] = t?.auth ? { provider: t.auth.provider } : null;
  const frontend: AgentConfig["frontend"] = {
    enabled: t?.frontend?.enabled ?? false,
    app_name: t?.frontend?.app_name ?? t?.agent.name ?? "",
    subtitle: t?.frontend?.subtitle ?? DEFAULT_FRONTEND_SUBTITLE,
    prompts: t?.frontend?.prompts ?? DEFAULT_FRONTEND_PROMPTS,
  };

  const mcpText = files.readText("mcp.json");
  const mcp = mcpText === null ? {} : parseMcpJson(mcpText, files.display("mcp.json"), env, report);
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
  const approvals = approvalsText === null ? [] : parseApprovals(approvalsText, files.display("approvals.toml"), {
    mcpServers: Object.keys(mcp),
    sandbox: sandbox.provider !== "none",
  }, report);
  if (approvalsText !== null) take("approvals.toml");

  const subagents = loadSubagents(files, {
    report,
    env,
    mcpServers: Object.keys(mcp),
    sandbox: sandbox.provider !== "none",
    checkModel,
    take,
  });

  // Credentials and provider variables (spec 2.6).
  const missingEnv: MissingEnv[] = [];
  const need = (m: MissingEnv | null) => m && missingEnv.push(m);
  let model = t?.agent.model ?? null;
  if (t) {
    if (model) need(missingForModel(opts.driver, model, env));
    else {
      model = defaultModel(opts.driver, env);
      if (!model) {
        missingEnv.push({
          variables: defaultChainVariables(opts.driver),
          anyOf: true,
          reason: "a default model ([agent].model is not set)",
        });
      }
    }
    for (const sa of subagents) if (sa.model) need(missingForModel(opts.driver, sa.model, env));
    const sandboxSpec = sandboxProviders.find((p) => p.provider === sandbox.provider);
    const sandboxMissing = sandboxSpec
      ? missingForProvider(missingSandboxEnv(sandboxSpec, env), `sandbox provider "${sandbox.provider}"`, env)
      : null;
    if (sandboxMissing) need({ ...sandboxMissing, sandbox: true });
    const identitySpec = auth && identityProviders.find((p) => p.provider === auth!.provider);
    if (identitySpec) {
      need(missingForProvider(identitySpec.env, `[auth] provider "${identitySpec.provider}"`, env));
      if (frontend.enabled) {
        need(missingForProvider(identitySpec.frontendEnv, `the frontend's "${identitySpec.provider}" sign-in`, env));
      }
    }
  }
  const dotenvName = files.display(".env");
  for (const m of missingEnv) {
    const d: Diagnostic = {
      file: dotenvName,
      message: describeMissing(m, "sentence"),
      hint: `Add ${
        m.anyOf ? "one of them" : m.variables.map((v) => `${v}=...`).join(", ")
      } to ${dotenvName} or the environment.`,
    };
    if (opts.requireEnv) problems.push(d);
  }

  problems.push(...files.problems);
  if (problems.length) {
    throw agentcliError(ConfigInvalid, { path: files.display(configName), count: problems.length }, {
      diagnostics: problems,
    });
  }

  let config: AgentConfig = {
    agent: { name: t!.agent.name, description: t!.agent.description ?? "", model },
    sandbox,
    auth,
    frontend,
    skills,
    user: { enabled: userEnabled },
    mcp,
    approvals,
    subagents,
  };
  const hookProblems: Diagnostic[] = [];
  const after = await opts.driver.runSequential("config:load", {
    config,
    projectDir: root,
    env,
    report: (d) => hookProblems.push(d),
  }, "config");
  config = after.config;
  if (hookProblems.length) {
    throw agentcliError(ConfigInvalidByPlugins, { path: files.display(configName), count: hookProblems.length }, {
      diagnostics: hookProblems,
    });
  }
  return { root, configPath: absConfig, config, files: bundleFiles, secrets: secretValues, env, warnings, missingEnv };
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

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function parseTomlFile<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  report: (d: Diagnostic) => void,
  kind: "agent" | "subagent" = "agent",
): { data: z.output<S> | null; raw: unknown } {
  let doc: unknown;
  try {
    doc = parseToml(text);
  } catch (err) {
    const e = err as TomlError;
    report({
      file,
      line: e.line,
      column: e.column,
      message: `is not valid TOML: ${tomlSyntaxMessage(e, text)}`,
      hint: "Fix the TOML syntax at that line.",
    });
    return { data: null, raw: null };
  }
  const parsed = schema.safeParse(doc);
  if (parsed.success) return { data: parsed.data, raw: doc };
  for (const issue of parsed.error.issues) {
    const path = issue.path as (string | number)[];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        if (path.length === 0) {
          const meant = (ALLOWED_SECTIONS as readonly string[]).find((s) => s === key.toLowerCase() && s !== key);
          report({
            file,
            line: locateTomlKey(text, [key]),
            message: `unknown section [${key}]`,
            hint: meant
              ? `Section names are lower-case: write [${meant}].`
              : kind === "subagent"
              ? `A subagent's agent.toml allows only [agent] (name, description, model)${
                (ALLOWED_SECTIONS as readonly string[]).includes(key)
                  ? `; [${key}] is set in the main agent's agent.toml and applies to its subagents`
                  : ""
              }. Remove [${key}].`
              : `Allowed sections: ${ALLOWED_SECTIONS.map((s) => `[${s}]`).join(", ")}.`,
          });
        } else {
          const shape = sectionKeys(schema, String(path[0]));
          report({
            file,
            line: locateTomlKey(text, [...path, key]),
            message: `unknown key "${key}" in [${path.join(".")}]`,
            hint: shape ? `Allowed keys in [${path[0]}]: ${shape.join(", ")}.` : "Remove it.",
          });
        }
      }
      continue;
    }
    const where = path.length === 0
      ? "the file"
      : `[${path[0]}]${path.slice(1).map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("")}`;
    const line = locateTomlKey(text, path) ?? locateTomlKey(text, path.slice(0, 1));
    const value = valueAt(doc, path);
    const key = String(path.filter((p) => typeof p === "string").at(-1) ?? "");
    // `[Agent]` is reported once, as an unknown section that means [agent].
    const caseVariant = path.length === 1 && doc !== null && typeof doc === "object" &&
      Object.keys(doc).some((k) => k !== path[0] && k.toLowerCase() === path[0]);
    if (issue.code === "invalid_type" && value === undefined && caseVariant) continue;
    if (issue.code === "invalid_type" && value === undefined) {
      report({
        file,
        line,
        message: `${where} ${issue.message.startsWith("is required") ? issue.message : "is required"}`,
        hint: path.length === 1
          ? `Add a [${path[0]}] section.`
          : `Add ${path.slice(1).join(".")} = ... under [${path[0]}].`,
      });
    } else if (issue.code === "invalid_type") {
      const expected = String((issue as { expected?: unknown }).expected ?? "");
      report({
        file,
        line,
        message: `${where} must be ${TOML_TYPE_NAMES[expected] ?? expected} (got ${tomlTypeOf(value)})`,
        hint: typeHint(expected, key, path, kind),
      });
    } else {
      report({
        file,
        line,
        message: `${where} ${issue.message.replace(/^Invalid input: /, "")}`,
        hint: `Change the value of ${path.slice(1).join(".") || path[0]}.`,
      });
    }
  }
  return { data: null, raw: doc };
}

const TOML_TYPE_NAMES: Record<string, string> = {
  string: "a string",
  boolean: "a boolean (true or false)",
  array: "an array",
  object: "a table",
  number: "a number",
};

function valueAt(doc: unknown, path: readonly (string | number)[]): unknown {
  let v: unknown = doc;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

/** The TOML name of a parsed value's type, for "must be X (got Y)". */
function tomlTypeOf(v: unknown): string {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "bigint") return "integer";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "float";
  if (Array.isArray(v)) return "array";
  if (v instanceof Date) return "date-time";
  if (v !== null && typeof v === "object") return "table";
  return typeof v;
}

function typeHint(
  expected: string,
  key: string,
  path: readonly (string | number)[],
  kind: "agent" | "subagent",
): string {
  if (typeof path.at(-1) === "number") {
    return `Each item of ${key} must be ${TOML_TYPE_NAMES[expected] ?? expected}, e.g. ${key} = ["...", "..."].`;
  }
  if (path.length === 1) {
    return `Write [${key}] as a section header on its own line, with its keys below it${
      kind === "subagent" ? " (name, description, model)" : ""
    }.`;
  }
  switch (expected) {
    case "string":
      return `Put the value in quotes: ${key} = "..." under [${path[0]}].`;
    case "boolean":
      return `Write true or false without quotes: ${key} = true under [${path[0]}].`;
    case "array":
      return `Write a list: ${key} = ["...", "..."] under [${path[0]}].`;
    default:
      return `Change the value of ${key} under [${path[0]}].`;
  }
}

function sectionKeys(schema: z.ZodType, section: string): string[] | null {
  const shape =
    (schema as unknown as { shape?: Record<string, { unwrap?: () => { shape?: object }; shape?: object }> }).shape;
  const sec = shape?.[section];
  const inner = sec?.shape ?? sec?.unwrap?.().shape;
  return inner ? Object.keys(inner) : null;
}

function loadSubagents(
  files: ProjectFiles,
  ctx: {
    report: (d: Diagnostic) => void;
    env: Env;
    mcpServers: string[];
    sandbox: boolean;
    checkModel: (model: string | undefined, file: string, text: string) => void;
    take: (path: string) => void;
  },
): SubagentConfig[] {
  const out: SubagentConfig[] = [];
  const byName = new Map<string, string>();
  for (const entry of files.list("subagents")) {
    const dir = `subagents/${entry.name}`;
    if (!entry.isDirectory) {
      ctx.report({
        file: files.display(dir),
        message: "is not a subagent directory",
        hint: "Each subagent is a folder: subagents/<name>/agent.toml and AGENTS.md.",
      });
      continue;
    }
    const tomlPath = `${dir}/agent.toml`;
    const hasToml = files.exists(tomlPath);
    const hasPrompt = files.exists(`${dir}/AGENTS.md`);
    if (!hasToml || !hasPrompt) {
      const missing = [!hasToml && "agent.toml", !hasPrompt && "AGENTS.md (the subagent's system prompt)"].filter(
        Boolean,
      ).join(" and no ");
      ctx.report({
        file: files.display(dir),
        message: `has no ${missing}`,
        hint: `Add ${
          [!hasToml && `${tomlPath} with [agent] name and description`, !hasPrompt && `${dir}/AGENTS.md`].filter(
            Boolean,
          ).join(" and ")
        }.`,
      });
    }
    if (files.kind(`${dir}/skills`) === "file") {
      ctx.report({
        file: files.display(`${dir}/skills`),
        message: "must be a directory",
        hint: `Put the subagent's skills in ${dir}/skills/<name>/SKILL.md.`,
      });
    }
    const text = files.readText(tomlPath);
    if (text === null) continue;
    const { data: parsed, raw } = parseTomlFile(
      text,
      files.display(tomlPath),
      subagentTomlSchema,
      ctx.report,
      "subagent",
    );
    // Names are checked for uniqueness even when a file has other problems: every problem in one run.
    const rawName = (raw as { agent?: { name?: unknown } } | null)?.agent?.name;
    const name = parsed?.agent.name ?? (typeof rawName === "string" && rawName ? rawName : null);
    if (name === null) continue;
    const prior = byName.get(name);
    if (prior) {
      ctx.report({
        file: files.display(tomlPath),
        line: locateTomlKey(text, ["agent", "name"]),
        message: `subagent name "${name}" is already used by ${prior}`,
        hint: "Subagent names must be unique; rename one of them.",
      });
      continue;
    }
    byName.set(name, files.display(tomlPath));
    if (!parsed) continue;
    ctx.checkModel(parsed.agent.model, files.display(tomlPath), text);
    const mcpText = files.readText(`${dir}/mcp.json`);
    const mcp: Record<string, McpServerConfig> | null = mcpText === null
      ? null
      : parseMcpJson(mcpText, files.display(`${dir}/mcp.json`), ctx.env, ctx.report);
    const skills = loadSkills(files, `${dir}/skills`, ctx.report);
    const approvalsText = files.readText(`${dir}/approvals.toml`);
    const approvals = approvalsText === null
      ? null
      : parseApprovals(approvalsText, files.display(`${dir}/approvals.toml`), {
        mcpServers: Object.keys(mcp ?? {}).length ? Object.keys(mcp!) : ctx.mcpServers,
        sandbox: ctx.sandbox,
      }, ctx.report);
    for (const f of ["agent.toml", "AGENTS.md", "mcp.json", "approvals.toml"]) ctx.take(`${dir}/${f}`);
    for (const s of skills) files.walk(s.path).forEach(ctx.take);
    out.push({
      name,
      description: parsed.agent.description,
      model: parsed.agent.model ?? null,
      skills,
      mcp,
      approvals,
    });
  }
  return out;
}
