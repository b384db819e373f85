/**
 * JSON text for a `jsonb` parameter. PostgreSQL's jsonb (PGlite's too: it is PostgreSQL) refuses
 * the escape `\u0000`, a NUL character in a string (its text cannot hold one), which a model's
 * output or a client's input may carry: the statement failed, and a run's end with it. In what
 * the stores write as jsonb (a thread's values, interrupts and error, metadata, a run's input, a
 * store item, ...) each NUL becomes U+FFFD, the replacement character; the exact copies keep it
 * (checkpoints are bytea, a run's stream events the JSON text). Filters go through the same
 * function, so a filter holding a NUL matches what was stored.
 */

/** `\u0000` as an escape, not as the text `\\u0000` (an escaped backslash, then `u0000`). */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** `JSON.stringify(value)`, each NUL in its strings and keys replaced by U+FFFD. */
export function jsonbText(value: unknown): string {
  return jsonbSafe(JSON.stringify(value));
}

/** JSON text with each `\u0000` escape replaced by `\ufffd`. */
export function jsonbSafe(json: string): string {
  return json !== undefined && json.includes("\\u0000") ? json.replace(NUL_ESCAPE, "$1\\ufffd") : json;
}
