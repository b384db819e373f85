/**
 * For encryption-at-rest tests: the files under a directory whose bytes contain a sentinel
 * (an embedded database's data files, WAL included).
 */
import { Buffer } from "node:buffer";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every file under `dir` whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const want = Buffer.from(needle);
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(want)) found.push(p);
    }
  };
  walk(dir);
  return found;
}
