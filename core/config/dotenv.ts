/**
 * Parses a `.env` file: `KEY=value`, `export KEY=value`, `#` comments, single- or double-
 * quoted values (double quotes understand `\n`). Malformed lines are reported with their
 * line number; values are never echoed in messages.
 */
import type { Diagnostic } from "../errors.ts";

export function parseDotenv(text: string, file: string): { values: Record<string, string>; problems: Diagnostic[] } {
  const values: Record<string, string> = {};
  const problems: Diagnostic[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) {
      problems.push({ file, line: i + 1, message: "not a KEY=value line", hint: "Write each variable as NAME=value; start comments with #." });
      continue;
    }
    const [, key, rest] = m as unknown as [string, string, string];
    let value = rest;
    const quote = value[0];
    if (quote === '"' || quote === "'") {
      const end = value.indexOf(quote, 1);
      if (end === -1) {
        problems.push({ file, line: i + 1, message: `the value of ${key} has no closing ${quote}`, hint: `Close the quote: ${key}=${quote}...${quote}` });
        continue;
      }
      value = value.slice(1, end);
      if (quote === '"') value = value.replace(/\\n/g, "\n").replace(/\\"/g, '"');
    } else {
      value = value.replace(/\s+#.*$/, "").trim();
    }
    values[key] = value;
  }
  return { values, problems };
}
