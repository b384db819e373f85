/**
 * An agent's or a subagent's `agent.toml`: parsed and checked against its schema, every
 * problem reported with its line (syntax with line and column; unknown sections and keys
 * with the allowed ones; wrong types with how to write the value).
 */
import type { z } from "zod";
import type { Diagnostic } from "../kernel/index.ts";
import { locateTomlKey, parseTomlReporting } from "./toml-locate.ts";
import { ALLOWED_SECTIONS } from "./schema.ts";

/** One TOML file to parse: problems go to `report`; `kind` chooses the hints. */
export interface TomlFile<S extends z.ZodType> {
  text: string;
  /** The file's name in messages. */
  file: string;
  schema: S;
  report: (d: Diagnostic) => void;
  kind?: "agent" | "subagent";
}

/** The file's data when it is valid (null otherwise), and the parsed document (null when it does not parse). */
export function parseTomlFile<S extends z.ZodType>(
  { text, file, schema, report, kind = "agent" }: TomlFile<S>,
): { data: z.output<S> | null; raw: unknown } {
  const parsedToml = parseTomlReporting({ text, file, hint: "Fix the TOML syntax at that line.", report });
  if (!parsedToml) return { data: null, raw: null };
  const doc: unknown = parsedToml.doc;
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
        hint: typeHint({ expected, key, path, kind }),
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

/** A wrong type's hint, for the key at `path` of a file of `kind`. */
function typeHint(
  { expected, key, path, kind }: {
    expected: string;
    key: string;
    path: readonly (string | number)[];
    kind: "agent" | "subagent";
  },
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
