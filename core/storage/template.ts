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
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { embeddedAsset, processEnv, VERSION } from "../kernel/index.ts";
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

/** Bumped when what a template holds changes other than through migrations. */
const TEMPLATE_FORMAT = 2;

let pgliteVersion: string | null | undefined;

/** The installed PGlite version (null inside a bundle, where the embedded template is used). */
function installedPgliteVersion(): string | null {
  if (pgliteVersion !== undefined) return pgliteVersion;
  pgliteVersion = null;
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const pkg = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as {
      name?: string;
      version?: string;
    };
    if (pkg.name === "@electric-sql/pglite" && pkg.version) pgliteVersion = pkg.version;
  } catch { /* bundled: no package.json to read */ }
  return pgliteVersion;
}

/**
 * The cache file of a template, or null when there is no cache directory (or
 * `AGENTCLI_TEMPLATE_CACHE=0`). Synchronous, like everything before a restore starts, so a
 * restore begins at once even while the main thread is busy loading modules.
 */
export function templateCachePath(spec: TemplateSpec): string | null {
  const env = processEnv();
  if (env.AGENTCLI_TEMPLATE_CACHE === "0") return null;
  let base = env.XDG_CACHE_HOME;
  if (!base) {
    const home = env.HOME || homedir();
    if (!home) return null;
    base = join(home, ".cache");
  }
  // Inside a bundle PGlite's version is unknown: the build's own version stands for it.
  const version = installedPgliteVersion() ?? `agentcli${VERSION}`;
  const hash = createHash("sha256").update(JSON.stringify([TEMPLATE_FORMAT, spec.migrations])).digest("hex").slice(
    0,
    12,
  );
  return join(base, "agentcli", `pglite-${version}-${spec.name}-${hash}.tar.gz`);
}

/** A template's bytes (gzip'd tar): the executable's asset, else the cache; null when neither. */
export function findTemplate(spec: TemplateSpec): Uint8Array | null {
  if (spec.name === "server") {
    const asset = embeddedAsset(PGLITE_TEMPLATE_ASSET);
    if (asset) return asset;
  }
  const path = templateCachePath(spec);
  if (!path) return null;
  try {
    return new Uint8Array(readFileSync(path));
  } catch {
    return null;
  }
}

/** How many templates of one name the cache keeps (other PGlite versions or migrations: other checkouts, upgrades). */
export const TEMPLATES_KEPT = 3;

/**
 * Writes a template to the cache (atomically; errors are ignored: the cache is optional), then
 * prunes the cache to the {@link TEMPLATES_KEPT} most recently written templates of its name.
 */
export async function saveTemplate(spec: TemplateSpec, gz: Uint8Array): Promise<void> {
  try {
    const path = templateCachePath(spec);
    if (!path) return;
    const { mkdir, writeFile, rename, readdir, stat, rm } = await import("node:fs/promises");
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await writeFile(tmp, gz);
    await rename(tmp, path);
    const dir = dirname(path);
    const mine = new RegExp(`^pglite-.+-${spec.name.replace(/[^A-Za-z0-9_]/g, "\\$&")}-[0-9a-f]{12}\\.tar\\.gz$`);
    const files = await Promise.all(
      (await readdir(dir)).filter((f) => mine.test(f)).map(async (f) => ({
        f,
        mtime: (await stat(join(dir, f))).mtimeMs,
      })),
    );
    files.sort((a, b) => b.mtime - a.mtime || (a.f < b.f ? -1 : 1));
    // A start reading one being removed just runs initdb (findTemplate treats a missing file as none).
    await Promise.all(
      files.slice(TEMPLATES_KEPT).filter((x) => join(dir, x.f) !== path).map((x) =>
        rm(join(dir, x.f), { force: true })
      ),
    );
  } catch { /* read-only home, full disk: the next start just runs initdb again */ }
}

/** Gzips a tar (off the main thread). */
export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const zlib = await import("node:zlib");
  return new Promise((resolve, reject) =>
    zlib.gzip(bytes, { level: 6 }, (err, out) => (err ? reject(err) : resolve(new Uint8Array(out))))
  );
}

export interface TarEntry {
  path: string;
  type: "file" | "dir";
  mode: number;
  data: Uint8Array;
}

/**
 * Parses a POSIX (ustar) tar, with GNU long names and pax `path` records. Self-contained
 * (no outside names) because it also runs as the source of a worker.
 */
export function parseTar(tar: Uint8Array): TarEntry[] {
  const text = (buf: Uint8Array, start: number, length: number): string => {
    const slice = buf.subarray(start, start + length);
    const end = slice.indexOf(0);
    return new TextDecoder().decode(end < 0 ? slice : slice.subarray(0, end));
  };
  const octal = (buf: Uint8Array, start: number, length: number): number => {
    const s = text(buf, start, length).trim();
    return s ? parseInt(s, 8) : 0;
  };
  const out: TarEntry[] = [];
  let offset = 0;
  let longName: string | null = null;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const size = octal(header, 124, 12);
    const type = String.fromCharCode(header[156] || 48);
    const data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "L") {
      longName = text(data, 0, data.length);
      continue;
    }
    if (type === "x") {
      const m = /\d+ path=([^\n]*)\n/.exec(new TextDecoder().decode(data));
      if (m) longName = m[1]!;
      continue;
    }
    if (type === "g") continue;
    const prefix = text(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    longName = null;
    if (type !== "0" && type !== "5" && type !== "7") continue;
    out.push({
      path: name,
      type: type === "5" ? "dir" : "file",
      mode: octal(header, 100, 8) || (type === "5" ? 0o700 : 0o600),
      data,
    });
  }
  return out;
}

type FsMod = typeof import("node:fs");
type PathMod = typeof import("node:path");
type ZlibMod = typeof import("node:zlib");

/**
 * The restore itself, synchronous and self-contained (it runs as a worker's source; its
 * modules and the tar parser come in as arguments): extracts into a sibling directory, then
 * renames it into place, so a crash never leaves half a database.
 */
function restoreSync(
  gz: Uint8Array,
  dataDir: string,
  fs: FsMod,
  path: PathMod,
  zlib: ZlibMod,
  untar: typeof parseTar,
  id: string,
): void {
  // Into one buffer of the tar's size (gzip's trailer holds it): zlib's default 16 KB pieces,
  // freed on a worker, stay in that thread's malloc arena (~40 MB of resident memory for good).
  const size = gz.length >= 4
    ? new DataView(gz.buffer, gz.byteOffset, gz.byteLength).getUint32(gz.length - 4, true)
    : 0;
  const entries = untar(new Uint8Array(zlib.gunzipSync(gz, { chunkSize: Math.max(64 * 1024, size + 1) })));
  const marker =
    entries.filter((e) => /(^|\/)PG_VERSION$/.test(e.path)).sort((a, b) => a.path.length - b.path.length)[0];
  if (!marker) throw new Error("the database template holds no PG_VERSION");
  const root = marker.path.slice(0, -"PG_VERSION".length);
  const tmp = `${dataDir}.${id}.restoring`;
  const made = new Set<string>();
  const dir = (d: string) => {
    if (made.has(d)) return;
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    made.add(d);
  };
  try {
    dir(tmp);
    for (const e of entries) {
      if (!e.path.startsWith(root)) continue;
      const rel = path.normalize(e.path.slice(root.length)).replace(/\/+$/, "");
      if (!rel || rel === "." || rel.startsWith("..") || path.isAbsolute(rel)) continue;
      const target = path.join(tmp, rel);
      if (e.type === "dir") dir(target);
      else {
        dir(path.dirname(target));
        // Trailing zeros (most of a 16 MB WAL segment) become a sparse tail: same content.
        let end = e.data.length;
        while (end > 0 && e.data[end - 1] === 0) end--;
        fs.writeFileSync(target, e.data.subarray(0, end), { mode: e.mode & 0o777 });
        if (end < e.data.length) fs.truncateSync(target, e.data.length);
      }
    }
    fs.chmodSync(tmp, 0o700);
    try {
      fs.rmdirSync(dataDir); // an empty directory (made by an earlier attempt, or by the user)
    } catch { /* absent, or not empty: the rename says which */ }
    fs.renameSync(tmp, dataDir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Restores a template into `dataDir`, which must not exist yet or be empty. Creating the few
 * hundred files of a database is mostly system time, so it runs on a worker thread while the
 * main thread goes on (loading modules, say); on the main thread where workers are missing.
 */
export async function restoreTemplate(gz: Uint8Array, dataDir: string): Promise<void> {
  const id = crypto.randomUUID().slice(0, 8);
  let worker: Worker | null = null;
  try {
    const source = `const { workerData, parentPort } = require("node:worker_threads");
(${restoreSync.toString()})(workerData.gz, workerData.dataDir, require("node:fs"), require("node:path"), require("node:zlib"), ${parseTar.toString()}, workerData.id);
parentPort.postMessage("done");`;
    worker = new Worker(source, { eval: true, workerData: { gz, dataDir, id } });
  } catch {
    worker = null;
  }
  if (worker) {
    const w = worker;
    const ok = await new Promise<boolean>((resolve) => {
      w.once("message", () => resolve(true));
      w.once("error", () => resolve(false));
      w.once("exit", (code) => resolve(code === 0));
    });
    if (ok) return;
  }
  const [fs, path, zlib] = await Promise.all([import("node:fs"), import("node:path"), import("node:zlib")]);
  restoreSync(gz, dataDir, fs, path, zlib, parseTar, id);
}

const preparing = new Map<string, Promise<boolean>>();

/**
 * Seeds `dataDir` from its template when it holds no database yet (resolves true when it
 * did). Call it early (`dev` does, while its modules load); opening the database then finds
 * it ready. Concurrent calls for one directory share one restore.
 */
export function prepareDataDir(dataDir: string, spec: TemplateSpec): Promise<boolean> {
  let p = preparing.get(dataDir);
  if (!p) {
    p = (async () => {
      if (existsSync(join(dataDir, "PG_VERSION"))) return false;
      const gz = findTemplate(spec);
      if (!gz) return false;
      try {
        await restoreTemplate(gz, dataDir);
        return true;
      } catch {
        return false;
      }
    })();
    preparing.set(dataDir, p);
  }
  return p;
}

/** Takes the result of a {@link prepareDataDir} of `dataDir` (once), preparing it now if none. */
export async function takePreparedDataDir(dataDir: string, spec: TemplateSpec): Promise<boolean> {
  try {
    return await prepareDataDir(dataDir, spec);
  } finally {
    preparing.delete(dataDir);
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

/**
 * Readies a new database to be a template, then dumps it (gzip'd tar): drops the `template0`
 * and `template1` databases (an embedded engine never runs CREATE DATABASE; without them a
 * new database is a third of the files, which is most of its restore time) and applies the
 * template's migrations.
 */
export async function dumpTemplate(sql: import("./sql.ts").SqlDriver, spec: TemplateSpec): Promise<Uint8Array> {
  const { migrate } = await import("./sql.ts");
  await sql.query("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
  await sql.query("DROP DATABASE IF EXISTS template0");
  await sql.query("DROP DATABASE IF EXISTS template1");
  for (const [scope, migrations] of Object.entries(spec.migrations)) await migrate(sql, scope, migrations);
  const tar = await sql.dumpTar?.();
  if (!tar) throw new Error("Cannot dump the database: only the embedded engine can be dumped");
  return gzip(tar);
}
