/**
 * For encryption-at-rest tests: the files under a directory whose bytes contain a sentinel
 * (an embedded database's data files, WAL included), or the tables of a PostgreSQL schema
 * with a row that does.
 */
import { Buffer } from "node:buffer";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { SqlDriver } from "../core/storage/sql.ts";

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

/**
 * The tables of the current schema of a PostgreSQL database with a row holding `needle`
 * (bytea read as UTF-8): a scan that knows no table, so it holds however the data is laid out.
 */
export async function rowsContaining(sql: SqlDriver, needle: string): Promise<string[]> {
  const { rows: tables } = await sql.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  const found: string[] = [];
  for (const { table_name } of tables) {
    const { rows } = await sql.query<Record<string, unknown>>(`SELECT * FROM "${table_name}"`);
    const text = JSON.stringify(
      rows,
      (_k, v) => (v && typeof v === "object" && v.type === "Buffer" ? Buffer.from(v.data).toString("utf8") : v),
    );
    const raw = rows.some((r) =>
      Object.values(r).some((v) => v instanceof Uint8Array && Buffer.from(v).includes(needle))
    );
    if (text.includes(needle) || raw) found.push(table_name);
  }
  return found;
}
