/**
 * Where a TOML file's problems are: a syntax error reported with its line and column, and
 * where a key of a document is written, so semantic errors (unknown key, wrong type) name a
 * line as syntax errors do.
 */
import { parse as parseToml, TomlError } from "smol-toml";
import type { Diagnostic } from "../kernel/index.ts";

/** Parses a TOML file's text: a syntax error is reported (its line and column, and `hint`) and gives null. */
export function parseTomlReporting(
  { text, file, hint, report }: { text: string; file: string; hint: string; report: (d: Diagnostic) => void },
): { doc: Record<string, unknown> } | null {
  try {
    return { doc: parseToml(text) as Record<string, unknown> };
  } catch (err) {
    const e = err as TomlError;
    report({
      file,
      line: e.line,
      column: e.column,
      message: `is not valid TOML: ${tomlSyntaxMessage(e, text)}`,
      hint,
    });
    return null;
  }
}

/**
 * Finds where a key of a TOML document is written. Handles `[table]` headers and `key = value`
 * lines, which is how `agent.toml` is written; other forms fall back to the table's header line.
 */
export function locateTomlKey(text: string, path: readonly (string | number)[]): number | undefined {
  const lines = text.split(/\r?\n/);
  const keys = path.filter((p): p is string => typeof p === "string");
  if (keys.length === 0) return undefined;
  let table: string[] = [];
  let tableLine: number | undefined;
  let best: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const header = /^\[\s*([A-Za-z0-9_."-]+)\s*\]/.exec(line);
    if (header) {
      table = header[1]!.split(".").map((s) => s.replace(/^"|"$/g, "").trim());
      if (sameStart(keys, table) && table.length === Math.min(keys.length, table.length)) {
        if (table.length === keys.length) return i + 1;
        tableLine = i + 1;
      }
      continue;
    }
    const kv = /^("?)([A-Za-z0-9_-]+)\1\s*=/.exec(line);
    if (kv && keys.length === table.length + 1 && sameStart(keys, table) && kv[2] === keys[keys.length - 1]) {
      return i + 1;
    }
    if (kv && table.length === 0 && keys.length >= 1 && kv[2] === keys[0]) best ??= i + 1;
  }
  return tableLine ?? best;
}

function sameStart(path: readonly string[], table: readonly string[]): boolean {
  return table.every((t, i) => path[i] === t);
}

/** smol-toml's message without its code frame, plus a hint when an unterminated string is the likely cause. */
export function tomlSyntaxMessage(e: { message: string; line?: number; column?: number }, text: string): string {
  const first = e.message.split("\n")[0]!;
  if (/control characters are not allowed in strings/i.test(first) && e.line && e.column) {
    // The control character is the end of the line: the string was never closed.
    const line = (text.split("\n")[e.line - 1] ?? "").replace(/\r$/, "");
    if (e.column > line.length) return `${first} (is a string missing its closing quote?)`;
  }
  return first;
}
