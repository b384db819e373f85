/**
 * A project's subagents: each folder of `subagents/` with its `agent.toml` (only [agent]),
 * `AGENTS.md`, and optionally its own `mcp.json`, `approvals.toml` and `skills/`. Names are
 * unique; every problem is reported, and each subagent's files go into the bundle.
 */
import type { Diagnostic, Env } from "../kernel/index.ts";
import { parseApprovals } from "./approvals.ts";
import { parseTomlFile } from "./load-toml.ts";
import { parseMcpJson } from "./mcp.ts";
import type { ProjectFiles } from "./project-files.ts";
import { type McpServerConfig, type SubagentConfig, subagentTomlSchema } from "./schema.ts";
import { loadSkills } from "./skills.ts";
import { locateTomlKey } from "./toml-locate.ts";

/** The subagents of the project in `files`; `ctx` is what the main agent's load knows. */
export function loadSubagents(
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
    const { data: parsed, raw } = parseTomlFile({
      text,
      file: files.display(tomlPath),
      schema: subagentTomlSchema,
      report: ctx.report,
      kind: "subagent",
    });
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
      : parseMcpJson({ text: mcpText, file: files.display(`${dir}/mcp.json`), env: ctx.env, report: ctx.report });
    const skills = loadSkills(files, `${dir}/skills`, ctx.report);
    const approvalsText = files.readText(`${dir}/approvals.toml`);
    const approvals = approvalsText === null ? null : parseApprovals({
      text: approvalsText,
      file: files.display(`${dir}/approvals.toml`),
      mcpServers: Object.keys(mcp ?? {}).length ? Object.keys(mcp!) : ctx.mcpServers,
      sandbox: ctx.sandbox,
      report: ctx.report,
    });
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
