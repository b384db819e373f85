/**
 * One SQL interface over two engines: embedded PGlite (WASM Postgres, the default, durable in
 * a data directory) and a real PostgreSQL server when a `DATABASE_URL` is given. Both speak
 * the same SQL, so every store and migration is written once.
 *
 * @example
 * const sql = await openSql({ dataDir: ".agentcli/db" });
 * await migrate(sql, "server", [{ version: 1, name: "init", up: "CREATE TABLE t (id text)" }]);
 * const { rows } = await sql.query<{ id: string }>("SELECT id FROM t WHERE id = $1", ["a"]);
 */
import { Buffer } from "node:buffer";
import { embeddedAsset, preferBaselineWasm, processEnv } from "../kernel/index.ts";
import type { TemplateSpec } from "./template.ts";

export interface SqlResult<T> {
  rows: T[];
  rowCount: number;
}

export interface SqlExecutor {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<SqlResult<T>>;
}

export interface SqlDriver extends SqlExecutor {
  readonly kind: "pglite" | "postgres";
  /** Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** The embedded engine only: a checkpointed dump of the data directory (uncompressed tar). */
  dumpTar?(): Promise<Uint8Array>;
  close(): Promise<void>;
}

export interface OpenSqlOptions {
  /** A PostgreSQL connection string; when absent the embedded engine is used. */
  url?: string;
  /** The embedded engine's data directory; absent means in memory. */
  dataDir?: string;
  /** Maximum pool size for PostgreSQL. */
  poolSize?: number;
  /**
   * PostgreSQL: statements sent again are prepared by name (see {@link StatementNames});
   * default true. False for a connection pooler that cannot keep named statements (PgBouncer
   * before 1.21 in transaction mode).
   */
  prepare?: boolean;
  /**
   * The embedded engine only: what a new database is seeded from (see ./template.ts), so it
   * skips `initdb`; the template is made on first use. Default: a bare database (no
   * migrations). `false`: always run `initdb`.
   */
  template?: TemplateSpec | false;
  /**
   * PostgreSQL only: how long to keep trying to connect before failing with a clear error
   * (default 0: one attempt), and the variable the URL came from, for that error.
   */
  connect?: { withinMs: number; variable: string };
  /**
   * PostgreSQL only: how long a statement (or transaction) failing because the database is
   * unreachable is retried before it fails with a 503 (default `AGENTCLI_DB_RETRY_SECONDS`,
   * 60 s; a request's statements: less, see ./db-retry.ts).
   */
  retryMs?: number;
}

const BASE_TEMPLATE: TemplateSpec = { name: "base", migrations: {} };

/** Opens the SQL engine chosen by the options. */
export async function openSql(opts: OpenSqlOptions = {}): Promise<SqlDriver> {
  return opts.url
    ? openPostgres(opts.url, opts.poolSize ?? 10, opts.connect, opts.retryMs, opts.prepare ?? true)
    : openEmbedded(opts.dataDir, opts.template === false ? null : opts.template ?? BASE_TEMPLATE);
}

/**
 * Opens the embedded engine. A new database is restored from its template when there is
 * one; otherwise it runs `initdb`, and (when a template is wanted) is migrated and dumped
 * into the cache so the next new database starts fast. A data directory is locked for the
 * process that opens it (see ./lock.ts): a second open throws a `DataDirLockedError`.
 */
async function openEmbedded(dataDir: string | undefined, template: TemplateSpec | null): Promise<SqlDriver> {
  if (!dataDir) return openEmbeddedUnlocked(undefined, template);
  // One process per data directory: a second would keep its own copy and lose writes.
  const { lockDataDir } = await import("./lock.ts");
  const lock = lockDataDir(dataDir);
  try {
    const sql = await openEmbeddedUnlocked(dataDir, template);
    return {
      ...sql,
      close: async () => {
        try {
          await sql.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function openEmbeddedUnlocked(dataDir: string | undefined, template: TemplateSpec | null): Promise<SqlDriver> {
  const [{ existsSync, mkdirSync, rmSync }, { join }, tpl] = await Promise.all([
    import("node:fs"),
    import("node:path"),
    import("./template.ts"),
  ]);
  if (dataDir) {
    const restored = template ? await tpl.takePreparedDataDir(dataDir, template) : false;
    if (existsSync(join(dataDir, "PG_VERSION"))) {
      try {
        return await openPglite(dataDir, undefined, false);
      } catch (err) {
        if (!restored) throw err;
        // A template this PGlite cannot start (made by another version): start over cold.
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
    mkdirSync(dataDir, { recursive: true });
  } else {
    const seed = template ? tpl.findTemplate(template) : null;
    if (seed) {
      try {
        return await openPglite(undefined, seed, false);
      } catch { /* as above */ }
    }
  }
  const sql = await openPglite(dataDir, undefined, true);
  if (template) {
    try {
      const gz = await tpl.dumpTemplate(sql, template);
      void tpl.saveTemplate(template, gz);
    } catch { /* the cache is an optimization */ }
  }
  return sql;
}

/**
 * PGlite executes in this thread and its queries settle as microtasks, so a chain of them
 * (a run's claim, checkpoints, events, end) never lets the event loop read a socket: other
 * requests, `/ok` included, wait for the whole chain. Every statement after 10 ms of such
 * work first yields one turn of the event loop.
 */
let lastYield = 0;
const turn: (resume: () => void) => void = (globalThis as { setImmediate?: (f: () => void) => void }).setImmediate ??
  ((f) => setTimeout(f, 0));
async function yieldNow(): Promise<void> {
  const now = performance.now();
  if (now - lastYield < 10) return;
  await new Promise<void>((resolve) => turn(resolve));
  lastYield = performance.now();
}

/** The PostgreSQL type oid of bytea. */
const BYTEA_OID = 17;

async function openPglite(
  dataDir: string | undefined,
  load: Uint8Array | undefined,
  initdb: boolean,
): Promise<SqlDriver> {
  const [{ PGlite }, { pgliteVectorExtension }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("./pglite-vector.ts"),
  ]);
  await preferBaselineWasm(processEnv());
  const wasm = embeddedAsset("pglite.wasm");
  const initdbWasm = initdb ? embeddedAsset("initdb.wasm") : null;
  const fsData = embeddedAsset("pglite.data");
  // pgvector, for the store's semantic search: created in a database only when it is used.
  const options: Record<string, unknown> = { extensions: { vector: await pgliteVectorExtension() } };
  if (dataDir) options.dataDir = dataDir;
  if (load) options.loadDataDir = new Blob([load as Uint8Array<ArrayBuffer>], { type: "application/x-gzip" });
  if (wasm && fsData) {
    // Inside the executable: the compiled modules come from its assets (initdb only when a
    // new database is made without a template).
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      WebAssembly.compile(wasm as Uint8Array<ArrayBuffer>),
      initdbWasm ? WebAssembly.compile(initdbWasm as Uint8Array<ArrayBuffer>) : undefined,
    ]);
    options.pgliteWasmModule = pgliteWasmModule;
    if (initdbWasmModule) options.initdbWasmModule = initdbWasmModule;
    options.fsBundle = new Blob([fsData as Uint8Array<ArrayBuffer>]);
  }
  // A small buffer pool: Postgres zeroes all of it at start, so it is resident for good (the
  // default, 128 MB, was most of the process's memory; 16 MB still ~19 MB resident against
  // ~10 MB at 8), and an agent server's working set is far smaller. Pages it evicts are
  // read back from the files (the OS's page cache), not lost.
  options.startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=8MB"];
  // bytea (checkpoints) in and out through Buffer's native hex codec: PGlite's own builds a
  // string per byte, which for a 10 MB state is seconds of blocked event loop and garbage.
  options.serializers = { [BYTEA_OID]: (v: unknown) => `\\x${Buffer.from(v as Uint8Array).toString("hex")}` };
  options.parsers = { [BYTEA_OID]: (v: string) => new Uint8Array(Buffer.from(v.slice(2), "hex")) };
  const db = await PGlite.create(options);
  const { PreparedStatements } = await import("./pglite-prepared.ts");
  const prepared = new PreparedStatements(db);
  let closed = false;
  return {
    kind: "pglite",
    dumpTar: async () => {
      await db.exec("CHECKPOINT");
      return new Uint8Array(await (await db.dumpDataDir("none")).arrayBuffer());
    },
    query: async <T>(text: string, params?: unknown[]) => {
      await yieldNow();
      const r = await prepared.query<T>(text, params);
      return { rows: r.rows, rowCount: Math.max(r.rows.length, r.affectedRows ?? 0) };
    },
    transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) =>
      db.transaction(async (tx) =>
        fn({
          query: async <R>(text: string, params?: unknown[]) => {
            await yieldNow();
            const r = await tx.query<R>(text, params);
            return { rows: r.rows, rowCount: Math.max(r.rows.length, r.affectedRows ?? 0) };
          },
        })
      ),
    close: async () => {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}

/**
 * Names for the statements the server sends again and again, so that PostgreSQL parses and
 * plans each once per connection (the `pg` driver prepares a named statement on a connection
 * the first time it runs there, then only binds and executes it). Planning the queue's claim
 * or a run's creation costs PostgreSQL about a millisecond each time. A text is named the
 * second time it is seen, and at most {@link StatementNames.MAX} texts are (the server uses
 * a few dozen; texts built with a varying number of rows make a few more); the rest, and
 * one-off statements, go unnamed as before.
 */
export class StatementNames {
  static readonly MAX = 200;
  static readonly #COUNTED = 2000;
  readonly #named = new Map<string, string | null>();
  readonly #seen = new Set<string>();

  /** The name to run `text` under, or undefined (unnamed). */
  nameOf(text: string): string | undefined {
    const known = this.#named.get(text);
    if (known !== undefined) return known ?? undefined;
    if (!/^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(text)) return undefined;
    if (!this.#seen.has(text)) {
      if (this.#seen.size >= StatementNames.#COUNTED) this.#seen.clear();
      this.#seen.add(text);
      return undefined;
    }
    this.#seen.delete(text);
    if (this.#named.size >= StatementNames.MAX) return undefined;
    const name = `agentcli_${this.#named.size + 1}`;
    this.#named.set(text, name);
    return name;
  }

  /** `text` is never named again. */
  unname(text: string): void {
    this.#named.set(text, null);
  }
}

async function openPostgres(
  url: string,
  poolSize: number,
  connect?: { withinMs: number; variable: string },
  retryMs?: number,
  prepare = true,
): Promise<SqlDriver> {
  const [pg, { connectWithin }, { retryTransient, isTransientDbError, DEFAULT_DB_RETRY_SECONDS }] = await Promise.all([
    import("pg").then((m) => m.default),
    import("./connect.ts"),
    import("./db-retry.ts"),
  ]);
  const retryFor = retryMs ?? DEFAULT_DB_RETRY_SECONDS * 1000;
  const pool = await connectWithin({
    service: "PostgreSQL",
    variable: connect?.variable ?? "DATABASE_URL",
    url,
    withinMs: connect?.withinMs ?? 0,
  }, async (timeoutMs) => {
    // An unanswered connect (a dropped packet, a host that is down) ends after `timeoutMs`.
    const p = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: timeoutMs });
    p.on("error", () => {});
    try {
      await p.query("SELECT 1");
    } catch (err) {
      await p.end().catch(() => {});
      throw err;
    }
    p.options.connectionTimeoutMillis = 0;
    return p;
  });
  const names = prepare ? new StatementNames() : null;
  type PgQueryable = {
    query: (
      q: { text: string; values?: unknown[]; name?: string },
    ) => Promise<{ rows: unknown[]; rowCount: number | null }>;
  };
  const wrap = (client: PgQueryable): SqlExecutor => ({
    query: async <T>(text: string, params?: unknown[]) => {
      const name = names?.nameOf(text);
      let r;
      try {
        r = await client.query(name ? { name, text, values: params } : { text, values: params });
      } catch (err) {
        // A table this statement reads changed shape since it was prepared on that connection
        // (a migration by a newer replica): that text goes unnamed from now on.
        if (!name || (err as { code?: string }).code !== "0A000") throw err;
        names!.unname(text);
        r = await client.query({ text, values: params });
      }
      return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
    },
  });
  let closed = false;
  const direct = wrap(pool);
  return {
    kind: "postgres",
    // A restart or failover of the database is waited out (./db-retry.ts); a whole
    // transaction is run again, never a statement inside one (its connection is gone).
    query: (text, params) => retryTransient(retryFor, () => direct.query(text, params)),
    transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) =>
      retryTransient(retryFor, async () => {
        const client = await pool.connect();
        let broken: unknown = null;
        try {
          await client.query("BEGIN");
          const result = await fn(wrap(client));
          await client.query("COMMIT");
          return result;
        } catch (err) {
          broken = err;
          await client.query("ROLLBACK").catch(() => {});
          throw err;
        } finally {
          // A connection that failed is not handed out again.
          client.release(broken && isTransientDbError(broken) ? (broken as Error) : undefined);
        }
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

export interface Migration {
  version: number;
  name: string;
  up: string;
}

/**
 * Applies versioned migrations of one component (`scope`) in order, each in its own
 * transaction, recording them in `agentcli_migrations`. Safe to run from several replicas at
 * once on PostgreSQL: an advisory lock serializes them.
 */
export async function migrate(sql: SqlDriver, scope: string, migrations: readonly Migration[]): Promise<void> {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  await sql.transaction(async (tx) => {
    // One lock for every scope, taken before the bookkeeping table is created: two processes
    // starting together on one PostgreSQL would otherwise race on CREATE TABLE IF NOT EXISTS.
    if (sql.kind === "postgres") await tx.query("SELECT pg_advisory_xact_lock(hashtext('agentcli:migrations'))");
    await tx.query(
      `CREATE TABLE IF NOT EXISTS agentcli_migrations (scope text NOT NULL, version integer NOT NULL, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (scope, version))`,
    );
    const { rows } = await tx.query<{ version: number }>("SELECT version FROM agentcli_migrations WHERE scope = $1", [
      scope,
    ]);
    const done = new Set(rows.map((r) => Number(r.version)));
    for (const m of sorted) {
      if (done.has(m.version)) continue;
      for (const statement of splitStatements(m.up)) await tx.query(statement);
      await tx.query("INSERT INTO agentcli_migrations (scope, version, name) VALUES ($1, $2, $3)", [
        scope,
        m.version,
        m.name,
      ]);
    }
  });
}

/** Splits a migration on `;` at line ends (migrations hold no procedural bodies). */
function splitStatements(text: string): string[] {
  return text.split(/;\s*(?:\n|$)/).map((s) => s.trim()).filter(Boolean);
}
