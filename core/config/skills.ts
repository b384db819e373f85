/**
 * Agent Skills: each subdirectory of `skills/` holds a `SKILL.md` whose YAML frontmatter
 * names the skill and describes when to use it. Dotfiles are skipped.
 */
import { parse as parseYaml } from "yaml";
import type { Diagnostic } from "../kernel/index.ts";
import type { SkillInfo } from "./schema.ts";
import type { ProjectFiles } from "./project-files.ts";

const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Reads the skills under `dir` (e.g. `skills` or `subagents/x/skills`). */
export function loadSkills(files: ProjectFiles, dir: string, report: (d: Diagnostic) => void): SkillInfo[] {
  const skills: SkillInfo[] = [];
  for (const entry of files.list(dir)) {
    const path = `${dir}/${entry.name}`;
    if (!entry.isDirectory) {
      report({
        file: files.display(path),
        message: "is not a skill directory",
        hint: `Put each skill in its own folder: ${dir}/<name>/SKILL.md.`,
      });
      continue;
    }
    const skillFile = `${path}/SKILL.md`;
    if (!files.exists(skillFile)) {
      report({
        file: files.display(path),
        message: "has no SKILL.md",
        hint: `Add ${skillFile} with frontmatter "name" and "description".`,
      });
      continue;
    }
    const text = files.readText(skillFile);
    if (text === null) continue;
    const fm = /^---\r?\n([\s\S]*?)\r?\n---\r?(\n|$)/.exec(text);
    if (!fm) {
      report({
        file: files.display(skillFile),
        line: 1,
        message: "has no YAML frontmatter",
        hint: "Start the file with:\n---\nname: <name>\ndescription: <when to use this skill>\n---",
      });
      continue;
    }
    let meta: unknown;
    try {
      meta = parseYaml(fm[1]!);
    } catch (err) {
      const pos = (err as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
      const code = (err as { code?: string }).code;
      report({
        file: files.display(skillFile),
        line: pos ? pos.line + 1 : 2,
        column: pos?.col,
        message: `has invalid YAML frontmatter: ${yamlMessage((err as Error).message)}`,
        hint: code === "BLOCK_AS_IMPLICIT_KEY"
          ? 'Quote a value that contains ": ", e.g. description: "Review: drafts and notes".'
          : "Fix the YAML between the --- lines.",
      });
      continue;
    }
    if (meta !== null && meta !== undefined && (typeof meta !== "object" || Array.isArray(meta))) {
      report({
        file: files.display(skillFile),
        line: 2,
        message: "frontmatter must be a mapping of keys (name, description), not a list or a single value",
        hint: `Write:\n---\nname: ${entry.name}\ndescription: <when to use this skill>\n---`,
      });
      continue;
    }
    const m = (meta ?? {}) as Record<string, unknown>;
    const lineOf = (key: string) => {
      const idx = fm[1]!.split(/\r?\n/).findIndex((l) => l.startsWith(`${key}:`));
      return idx === -1 ? 1 : idx + 2;
    };
    let ok = true;
    if (typeof m.name !== "string" || !m.name) {
      report({
        file: files.display(skillFile),
        line: lineOf("name"),
        message: 'frontmatter has no "name"',
        hint: `Add: name: ${entry.name}`,
      });
      ok = false;
    } else if (!SKILL_NAME.test(m.name) || m.name.length > 64) {
      report({
        file: files.display(skillFile),
        line: lineOf("name"),
        message: `skill name "${m.name}" must be lower-case letters, digits and single hyphens, at most 64 characters`,
        hint: `Use e.g. name: ${entry.name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`,
      });
      ok = false;
    } else if (m.name !== entry.name) {
      report({
        file: files.display(skillFile),
        line: lineOf("name"),
        message: `skill name "${m.name}" does not match its folder "${entry.name}"`,
        hint: `Rename the folder to "${m.name}" or set name: ${entry.name}`,
      });
      ok = false;
    }
    if (typeof m.description !== "string" || !m.description.trim()) {
      report({
        file: files.display(skillFile),
        line: lineOf("description"),
        message: 'frontmatter has no "description"',
        hint: "Add: description: <what the skill does and when to use it>",
      });
      ok = false;
    } else if (m.description.length > 1024) {
      report({
        file: files.display(skillFile),
        line: lineOf("description"),
        message: "description is longer than 1024 characters",
        hint: "Shorten it; put details in the body of SKILL.md.",
      });
      ok = false;
    }
    if (ok) skills.push({ name: m.name as string, description: (m.description as string).trim(), path });
  }
  return skills;
}

/**
 * The yaml library's message without its code frame and its "at line N, column M:" (the
 * diagnostic carries the position, counted in SKILL.md rather than in the frontmatter).
 */
function yamlMessage(message: string): string {
  const text = message.split(/\n\s*\n/)[0]!.replace(/\s*\n\s*/g, " ").trim();
  return text.replace(/\s+at line \d+, column \d+:?$/, "").replace(/:$/, "");
}
