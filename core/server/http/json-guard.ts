/**
 * Checks on request bodies before they reach storage or a graph: PostgreSQL stores neither
 * U+0000 nor an unpaired UTF-16 surrogate in text or jsonb (it would answer with an encoding
 * error deep in a query), and very deep nesting overflows recursive code downstream. Both are
 * the client's mistake, so they are a 422 that names where the bad value is.
 *
 * @example
 * checkJsonText(JSON.parse(text), "body"); // throws a 422 naming e.g. `input.messages[0].content`
 */
import { userError } from "../../kernel/index.ts";

/** Nesting deeper than this is refused (state, metadata and store values are far shallower). */
export const MAX_JSON_DEPTH = 100;

// NUL is what this pattern is for: PostgreSQL text and JSON refuse it.
// deno-lint-ignore no-control-regex
const BAD_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with a string, or null: a NUL character or an unpaired surrogate. */
export function badText(s: string): string | null {
  const m = BAD_TEXT.exec(s);
  if (!m) return null;
  return m[0] === "\u0000"
    ? "contains a NUL character (U+0000)"
    : "contains an unpaired UTF-16 surrogate (invalid Unicode)";
}

/** Throws a 422 when `value` (walked without recursion) holds bad text in a key or string, or nests too deep. */
export function checkJsonText(value: unknown, where = "body"): void {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: where, depth: 0 }];
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === "string") {
      const problem = badText(v);
      if (problem) {
        throw refuse(`${short(path)} ${problem}`, "Remove the character (text is stored as UTF-8 without NUL bytes).");
      }
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw refuse(`${short(path)} nests deeper than ${MAX_JSON_DEPTH} levels`, "Send a flatter value.");
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const problem = badText(k);
      if (problem) throw refuse(`a key in ${short(path)} ${problem}`, "Remove the character from the key.");
      stack.push({ v: child, path: `${path}.${k}`, depth: depth + 1 });
    }
  }
}

function short(path: string): string {
  return path.length > 120 ? `${path.slice(0, 120)}…` : path;
}

function refuse(message: string, hint: string) {
  return userError("UNPROCESSABLE", { message: `Invalid request: ${message}`, hint });
}
