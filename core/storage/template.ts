/**
 * Templates of new embedded databases. A new PGlite data directory costs an `initdb` (3-8 s
 * on small machines); restoring a dump of one that was made once, already migrated, costs a
 * fraction of that. A template comes from the executable (SEA asset
 * {@link PGLITE_TEMPLATE_ASSET}, made at build time by {@link createPgliteTemplate}) or from
 * the user's cache (`$XDG_CACHE_HOME/agentcli` or `~/.cache/agentcli`), written on first use
 * and keyed by the PGlite version and the migrations. A template only ever seeds a new,
 * empty database: what it holds is exactly what a fresh `initdb` plus migrations would.
 *
 * @example
 * const bytes = await createPgliteTemplate(); // gzip'd tar of a migrated, empty database
 * writeFileSync("dist/pglite-template.tar.gz", bytes);
 */
import { embeddedAsset, processEnv } from "../runtime.ts";
import type { Migration } from "./sql.ts";

/** The SEA asset name of the agent server's template (see {@link createPgliteTemplate}). */
export const PGLITE_TEMPLATE_ASSET = "pglite-template.tar.gz";

/** What a new database is seeded with: a name, and the migrations applied before the dump. */
export interface TemplateSpec {
  /** Names the template in the cache; "server" also reads the executable's embedded asset. */
  name: string;
  /** Migrations by scope, applied to the template before it is dumped. */
  migrations: Record<string, readonly Migration[]>;
}

let pgliteVersion: string | null | undefined;

/** The installed PGlite version (null inside a bundle, where the embedded template is used). */
async function installedPgliteVersion(): Promise<string | null> {
  if (pgliteVersion !== undefined) return pgliteVersion;
  pgliteVersion = null;
  try {
    const [{ createRequire }, { readFileSync }, { dirname, join }] = await Promise.all([import("node:module"), import("node:fs"), import("node:path")]);
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const pkg = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as { name?: string; version?: string };
    if (pkg.name === "@electric-sql/pglite" && pkg.version) pgliteVersion = pkg.version;
  } catch { /* bundled: no package.json to read */ }
  return pgliteVersion;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The cache file of a template, or null when there is no cache directory. */
export async function templateCachePath(spec: TemplateSpec): Promise<string | null> {
  const env = processEnv();
  if (env.AGENTCLI_TEMPLATE_CACHE === "0") return null;
  const { homedir } = await import("node:os");
  const { join } = await import("node:path");
  let base = env.XDG_CACHE_HOME;
  if (!base) {
    const home = env.HOME || homedir();
    if (!home) return null;
    base = join(home, ".cache");
  }
  const version = (await installedPgliteVersion()) ?? "bundled";
  const hash = (await sha256Hex(JSON.stringify(spec.migrations))).slice(0, 12);
  return join(base, "agentcli", `pglite-${version}-${spec.name}-${hash}.tar.gz`);
}

/** A template's bytes (gzip'd tar): the executable's asset, else the cache; null when neither. */
export async function findTemplate(spec: TemplateSpec): Promise<Uint8Array | null> {
  if (spec.name === "server") {
    const asset = embeddedAsset(PGLITE_TEMPLATE_ASSET);
    if (asset) return asset;
  }
  const path = await templateCachePath(spec);
  if (!path) return null;
  try {
    const { readFile } = await import("node:fs/promises");
    return new Uint8Array(await readFile(path));
  } catch {
    return null;
  }
}

/** Writes a template to the cache (atomically; errors are ignored: the cache is optional). */
export async function saveTemplate(spec: TemplateSpec, gz: Uint8Array): Promise<void> {
  try {
    const path = await templateCachePath(spec);
    if (!path) return;
    const { mkdir, writeFile, rename } = await import("node:fs/promises");
    const { dirname } = await import("node:path");
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await writeFile(tmp, gz);
    await rename(tmp, path);
  } catch { /* read-only home, full disk: the next start just runs initdb again */ }
}

/** Gzips a tar (off the main thread). */
export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const zlib = await import("node:zlib");
  return new Promise((resolve, reject) => zlib.gzip(bytes, { level: 6 }, (err, out) => (err ? reject(err) : resolve(new Uint8Array(out)))));
}

async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const zlib = await import("node:zlib");
  return new Promise((resolve, reject) => zlib.gunzip(bytes, (err, out) => (err ? reject(err) : resolve(new Uint8Array(out)))));
}

interface TarEntry {
  path: string;
  type: "file" | "dir";
  mode: number;
  data: Uint8Array;
}

function readString(buf: Uint8Array, start: number, length: number): string {
  const slice = buf.subarray(start, start + length);
  const end = slice.indexOf(0);
  return new TextDecoder().decode(end < 0 ? slice : slice.subarray(0, end));
}

function readOctal(buf: Uint8Array, start: number, length: number): number {
  const s = readString(buf, start, length).trim();
  return s ? parseInt(s, 8) : 0;
}

/** Parses a POSIX (ustar) tar, with GNU long names and pax `path` records. */
export function parseTar(tar: Uint8Array): TarEntry[] {
  const out: TarEntry[] = [];
  let offset = 0;
  let longName: string | null = null;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const size = readOctal(header, 124, 12);
    const type = String.fromCharCode(header[156] || 48);
    const data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "L") {
      longName = readString(data, 0, data.length);
      continue;
    }
    if (type === "x") {
      const m = /\d+ path=([^\n]*)\n/.exec(new TextDecoder().decode(data));
      if (m) longName = m[1]!;
      continue;
    }
    if (type === "g") continue;
    const prefix = readString(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${readString(header, 0, 100)}` : readString(header, 0, 100));
    longName = null;
    if (type !== "0" && type !== "5" && type !== "7") continue;
    out.push({ path: name, type: type === "5" ? "dir" : "file", mode: readOctal(header, 100, 8) || (type === "5" ? 0o700 : 0o600), data });
  }
  return out;
}

/**
 * Restores a template into `dataDir`, which must not exist yet or be empty: extracts into a
 * sibling directory, then renames it into place, so a crash never leaves half a database.
 */
export async function restoreTemplate(gz: Uint8Array, dataDir: string): Promise<void> {
  // Synchronous writes: ~1,000 small files, written far faster than one await each; this
  // runs once, at the start of a new database, before the server serves anything.
  const { mkdirSync, writeFileSync, renameSync, rmSync, rmdirSync, chmodSync, truncateSync } = await import("node:fs");
  const { join, dirname, normalize, isAbsolute } = await import("node:path");
  const entries = parseTar(await gunzip(gz));
  const marker = entries.filter((e) => /(^|\/)PG_VERSION$/.test(e.path)).sort((a, b) => a.path.length - b.path.length)[0];
  if (!marker) throw new Error("the database template holds no PG_VERSION");
  const root = marker.path.slice(0, -"PG_VERSION".length);
  const tmp = `${dataDir}.${crypto.randomUUID().slice(0, 8)}.restoring`;
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const made = new Set<string>([tmp]);
  const dir = (d: string) => {
    if (made.has(d)) return;
    mkdirSync(d, { recursive: true, mode: 0o700 });
    made.add(d);
  };
  try {
    for (const e of entries) {
      if (!e.path.startsWith(root)) continue;
      const rel = normalize(e.path.slice(root.length)).replace(/\/+$/, "");
      if (!rel || rel === "." || rel.startsWith("..") || isAbsolute(rel)) continue;
      const target = join(tmp, rel);
      if (e.type === "dir") dir(target);
      else {
        dir(dirname(target));
        // Trailing zeros (most of a 16 MB WAL segment) become a sparse tail: same content.
        let end = e.data.length;
        while (end > 0 && e.data[end - 1] === 0) end--;
        writeFileSync(target, e.data.subarray(0, end), { mode: e.mode & 0o777 });
        if (end < e.data.length) truncateSync(target, e.data.length);
      }
    }
    chmodSync(tmp, 0o700);
    try {
      rmdirSync(dataDir); // an empty directory (made by an earlier attempt, or by the user)
    } catch { /* absent */ }
    renameSync(tmp, dataDir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Builds the agent server's template: a new in-memory database with the server's migrations
 * applied, dumped as a gzip'd tar. The executable build embeds it as the SEA asset
 * {@link PGLITE_TEMPLATE_ASSET}, so a new embedded database there never runs `initdb`.
 */
export async function createPgliteTemplate(): Promise<Uint8Array> {
  const [{ openSql }, { SERVER_TEMPLATE }] = await Promise.all([import("./sql.ts"), import("./migrations.ts")]);
  const sql = await openSql({ template: false });
  try {
    return await dumpTemplate(sql, SERVER_TEMPLATE);
  } finally {
    await sql.close();
  }
}

/** Applies a template's migrations to a new database, then dumps it (gzip'd tar). */
export async function dumpTemplate(sql: import("./sql.ts").SqlDriver, spec: TemplateSpec): Promise<Uint8Array> {
  const { migrate } = await import("./sql.ts");
  for (const [scope, migrations] of Object.entries(spec.migrations)) await migrate(sql, scope, migrations);
  const tar = await sql.dumpTar?.();
  if (!tar) throw new Error("Cannot dump the database: only the embedded engine can be dumped");
  return gzip(tar);
}
