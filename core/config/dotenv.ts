/**
 * Parses a `.env` file as the `dotenv` package does: `KEY=value` (or `KEY: value`), an
 * optional `export `, keys of letters, digits, `_`, `.` and `-`; values single-, double- or
 * backtick-quoted, where a quoted value may span lines; double quotes expand `\n` and `\r`;
 * an unquoted value ends at `#` and is trimmed. Where dotenv would silently skip or mangle a
 * line, this reports it with its line number instead: a line that is not an assignment, a
 * quote that is never closed, text after a closing quote, a key set twice to different values
 * (an empty placeholder may be filled in later), and a NUL
 * character (no process can receive it). Values are never echoed in messages.
 *
 * @example
 * parseDotenv('KEY="line one\nline two"\n', ".env").values.KEY; // "line one\nline two"
 */
import type { Diagnostic } from "../kernel/index.ts";

const ASSIGNMENT = /^[ \t]*(?:export[ \t]+)?([\w.-]+)(?:[ \t]*=[ \t]*|:[ \t]+)/;

export function parseDotenv(text: string, file: string): { values: Record<string, string>; problems: Diagnostic[] } {
  const values: Record<string, string> = {};
  const problems: Diagnostic[] = [];
  const firstLine = new Map<string, number>();
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = src.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    if (!line.trim() || line.trim().startsWith("#")) continue;
    const m = ASSIGNMENT.exec(line);
    if (!m) {
      problems.push({
        file,
        line: lineNo,
        message: "not a KEY=value line",
        hint: "Write each variable as NAME=value; start comments with #.",
      });
      continue;
    }
    const key = m[1]!;
    const rest = line.slice(m[0].length);
    let value: string;
    const quote = rest[0];
    if (quote === '"' || quote === "'" || quote === "`") {
      // The closing quote may be on a later line (a multi-line value); a backslash escapes it.
      const joined = [rest.slice(1), ...lines.slice(i + 1)].join("\n");
      const close = closingQuote(joined, quote);
      const after = close === -1 ? "" : joined.slice(close + 1).split("\n")[0]!;
      const spanned = close === -1 ? 0 : joined.slice(0, close).split("\n").length - 1;
      if (close === -1 || (spanned > 0 && !/^[ \t]*(#.*)?$/.test(after))) {
        problems.push({
          file,
          line: lineNo,
          message: `the value of ${key} has no closing ${quote}`,
          hint: `Close the quote: ${key}=${quote}...${quote}`,
        });
        // Never closed: the rest of the file is what the value was meant to hold, not more lines to report.
        if (close === -1) break;
        continue;
      }
      if (!/^[ \t]*(#.*)?$/.test(after)) {
        problems.push({
          file,
          line: lineNo + spanned,
          message: `the value of ${key} has text after its closing ${quote}`,
          hint: `Put the whole value inside the quotes, or start a comment with " #".`,
        });
        i += spanned;
        continue;
      }
      value = joined.slice(0, close);
      if (quote === '"') value = value.replace(/\\n/g, "\n").replace(/\\r/g, "\r");
      i += spanned;
    } else {
      value = rest.replace(/#.*$/, "").trim();
    }
    if (value.includes("\u0000")) {
      problems.push({
        file,
        line: lineNo,
        message: `the value of ${key} contains a NUL character`,
        hint: "Remove it: environment variables cannot hold NUL.",
      });
      continue;
    }
    // A placeholder (`KEY=` as `init` writes it) may be filled in by a later line; two different values are ambiguous.
    const prior = firstLine.get(key);
    if (prior !== undefined && values[key] !== "" && value !== "" && values[key] !== value) {
      problems.push({
        file,
        line: lineNo,
        message: `${key} is set twice to different values (first on line ${prior})`,
        hint: `Keep one ${key}= line.`,
      });
      continue;
    }
    if (prior === undefined || value !== "") {
      firstLine.set(key, lineNo);
      values[key] = value;
    }
  }
  return { values, problems };
}

/** Index of the quote that closes a value (dotenv: a backslash before the quote escapes it), or -1. */
function closingQuote(s: string, quote: string): number {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && s[i + 1] === quote) i++;
    else if (s[i] === quote) return i;
  }
  return -1;
}
