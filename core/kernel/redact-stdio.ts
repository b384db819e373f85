/**
 * The process's own output is a way out too: whatever writes to stdout or stderr (the server
 * log, a plugin's `console.error`, a library's warning) is redacted (core/kernel/redact.ts) before
 * it reaches the terminal or the log collector. Installed once by the host that serves.
 *
 * @example
 * registerSecrets(secretValues(process.env));
 * redactProcessOutput();
 */
import { redact } from "./redact.ts";

let installed = false;
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The chunk as text, or null when it is not valid UTF-8. */
function utf8(chunk: Uint8Array): string | null {
  try {
    return decoder.decode(chunk);
  } catch {
    return null;
  }
}

/** Wraps `process.stdout.write` and `process.stderr.write` so every write is redacted first (idempotent). */
export function redactProcessOutput(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === "string") return write(redact(chunk), ...rest);
      if (chunk instanceof Uint8Array) {
        // Bytes that are not UTF-8 text (the test runner's serialized reports, a binary pipe)
        // pass unchanged, and so does text with nothing to redact: the bytes are never re-encoded.
        const text = utf8(chunk);
        const clean = text === null ? null : redact(text);
        if (clean === null || clean === text) return write(chunk, ...rest);
        const encoding = typeof rest[0] === "string" ? rest.slice(1) : rest;
        return write(clean, ...encoding);
      }
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}
