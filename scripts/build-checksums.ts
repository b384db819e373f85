/**
 * Writes `SHA256SUMS` beside the platform executables (`agentcli-<platform>`, `.exe` for
 * Windows): one `<sha256>  <file>` line each, sorted by name, the format `sha256sum -c` and
 * `shasum -a 256 -c` read. A download is verified with
 * `sha256sum --ignore-missing -c SHA256SUMS` (docs/executables.md).
 *
 * @example
 * writeChecksums("dist"); // "dist/SHA256SUMS"
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Lists every `agentcli-<platform>` file of `dir` with its SHA-256 in `dir/SHA256SUMS`; returns its path. */
export function writeChecksums(dir: string): string {
  const files = readdirSync(dir).filter((f) => /^agentcli-[a-z0-9]+-[a-z0-9]+(\.exe)?$/.test(f)).sort();
  const lines = files.map((f) => `${createHash("sha256").update(readFileSync(join(dir, f))).digest("hex")}  ${f}\n`);
  const out = join(dir, "SHA256SUMS");
  writeFileSync(out, lines.join(""));
  return out;
}
