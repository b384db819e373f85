/**
 * The process's own output is a way out too: whatever writes to stdout or stderr (the server
 * log, a plugin's `console.error`, a library's warning) is redacted (core/redact.ts) before
 * it reaches the terminal or the log collector. Installed once by the host that serves.
 *
 * @example
 * registerSecrets(secretValues(process.env));
 * redactProcessOutput();
 */
import { redact } from "./redact.ts";

let installed = false;

/** Wraps `process.stdout.write` and `process.stderr.write` so every write is redacted first (idempotent). */
export function redactProcessOutput(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === "string") return write(redact(chunk), ...rest);
      if (chunk instanceof Uint8Array) {
        const encoding = typeof rest[0] === "string" ? rest.slice(1) : rest;
        return write(redact(new TextDecoder().decode(chunk)), ...encoding);
      }
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}
