/** A JSON value, pretty-printed (long values fold). */
export function Json({ value, testId }: { value: unknown; testId?: string }) {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? "undefined";
  } catch {
    text = String(value);
  }
  return <pre className="json" data-testid={testId}>{text.length > 20000 ? `${text.slice(0, 20000)}\n… (${text.length} characters)` : text}</pre>;
}

/** Parses JSON typed by a person; an Error naming the problem when it is not JSON. */
export function parseJson(text: string, what: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}
