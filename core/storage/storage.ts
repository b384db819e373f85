/**
 * The agent server's storage: one SQL engine (embedded PGlite by default, PostgreSQL with a
 * URL) holding assistants, threads, runs, the stream log, LangGraph checkpoints and the
 * LangGraph store. Migrations run on open.
 *
 * @example
 * const storage = await openStorage({ dataDir: ".agentcli/db" });
 * const thread = await storage.threads.create({ thread_id: crypto.randomUUID(), metadata: {} });
 * await storage.close();
 */
import { AssistantStore } from "./assistants.ts";
import { SqlCheckpointSaver } from "./checkpointer.ts";
import { CronStore } from "./crons.ts";
import type { AtRestEncryption } from "./encryption.ts";
import type { StoreIndex } from "./store-index.ts";
import { SERVER_MIGRATIONS, SERVER_TEMPLATE } from "./migrations.ts";
import { RunEventLog } from "./run-events.ts";
import { RunSpanStore } from "./run-spans.ts";
import { RunStore } from "./runs.ts";
import { SandboxRecords } from "./sandboxes.ts";
import { migrate, openSql, type OpenSqlOptions, type SqlDriver, type SqlExecutor } from "./sql.ts";
import { SqlStore } from "./store.ts";
import { ThreadStore } from "./threads.ts";
import { TtlStore } from "./ttl.ts";
import { UsageStore } from "./usage.ts";

/**
 * A transaction of {@link Storage.transaction}: pass it to the stores' methods that take `tx`
 * so their statements run in it. (Only core/storage/ writes SQL.)
 */
export type StorageTx = SqlExecutor;

export interface Storage {
  /** The SQL engine: embedded PGlite (one process owns it) or a shared PostgreSQL. */
  readonly kind: SqlDriver["kind"];
  /** Runs `fn` in one transaction (commits when it resolves, rolls back when it throws). */
  transaction<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T>;
  readonly assistants: AssistantStore;
  readonly threads: ThreadStore;
  readonly runs: RunStore;
  readonly crons: CronStore;
  readonly events: RunEventLog;
  /** Runs' traces kept locally (./run-spans.ts). */
  readonly spans: RunSpanStore;
  readonly checkpointer: SqlCheckpointSaver;
  readonly store: SqlStore;
  /** The sandbox of each scope key (the sandbox manager's table). */
  readonly sandboxes: SandboxRecords;
  /** Store items' and threads' time-to-live, and their sweeps. */
  readonly ttl: TtlStore;
  /** Model calls' token usage and the budgets' counters (./usage.ts). */
  readonly usage: UsageStore;
  /** The encryption at rest in use (`LANGGRAPH_AES_KEY`), or null. */
  readonly encryption: AtRestEncryption | null;
  close(): Promise<void>;
}

/** How storage is opened: the SQL engine, and what is encrypted at rest. */
export interface StorageOptions extends OpenSqlOptions {
  /** Seals checkpoints, writes, store values, run inputs, thread state and the stream log (./encryption.ts). */
  encryption?: AtRestEncryption | null;
  /** The store's embedding model: `index` and semantic `query` (./store-index.ts); text matching without. */
  storeIndex?: StoreIndex | null;
  /** The revision this server runs (`AGENTCLI_REVISION_ID` under `serve`): its runs record it and its workers prefer them (./runs/revisions.ts). */
  revision?: string | null;
}

/** Opens the SQL engine chosen by the options, migrates it, and wraps it. */
export async function openStorage(opts: StorageOptions = {}): Promise<Storage> {
  const { encryption, storeIndex, revision, ...sqlOpts } = opts;
  const sql = await openSql({ template: SERVER_TEMPLATE, ...sqlOpts });
  try {
    return await createStorage(sql, { encryption, storeIndex, revision });
  } catch (err) {
    await sql.close().catch(() => {});
    throw err;
  }
}

/** Wraps an open SQL driver (migrating it); closing the storage closes the driver. */
export async function createStorage(
  sql: SqlDriver,
  opts: { encryption?: AtRestEncryption | null; storeIndex?: StoreIndex | null; revision?: string | null } = {},
): Promise<Storage> {
  await migrate(sql, "server", SERVER_MIGRATIONS);
  const encryption = opts.encryption ?? null;
  const checkpointer = new SqlCheckpointSaver(sql, { encryption });
  const storage: Storage = {
    kind: sql.kind,
    transaction: (fn) => sql.transaction(fn),
    assistants: new AssistantStore(sql, { encryption }),
    threads: new ThreadStore(sql, { encryption }),
    runs: new RunStore(sql, { encryption, revision: opts.revision }),
    crons: new CronStore(sql, { encryption }),
    events: new RunEventLog(sql, { encryption }),
    spans: new RunSpanStore(sql, { encryption }),
    checkpointer,
    store: new SqlStore(sql, { encryption, index: opts.storeIndex }),
    ttl: new TtlStore(sql),
    sandboxes: new SandboxRecords(sql),
    usage: new UsageStore(sql),
    encryption,
    close: async () => {
      await checkpointer.flush().catch(() => {});
      await sql.close();
    },
  };
  drivers.set(storage, sql);
  return storage;
}

const drivers = new WeakMap<Storage, SqlDriver>();

/**
 * The SQL driver under a storage, for tests that set up or check rows directly (and for
 * `createStorage` over the same driver). Not part of core/storage/'s public face
 * (./index.ts): the other layers ask the stores.
 */
export function sqlOf(storage: Storage): SqlDriver {
  const sql = drivers.get(storage);
  if (!sql) throw new Error("sqlOf: not a storage made by openStorage/createStorage");
  return sql;
}
