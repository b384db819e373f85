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
import { SERVER_MIGRATIONS, SERVER_TEMPLATE } from "./migrations.ts";
import { RunEventLog } from "./run-events.ts";
import { RunStore } from "./runs.ts";
import { migrate, openSql, type OpenSqlOptions, type SqlDriver } from "./sql.ts";
import { SqlStore } from "./store.ts";
import { ThreadStore } from "./threads.ts";

export interface Storage {
  readonly sql: SqlDriver;
  readonly assistants: AssistantStore;
  readonly threads: ThreadStore;
  readonly runs: RunStore;
  readonly crons: CronStore;
  readonly events: RunEventLog;
  readonly checkpointer: SqlCheckpointSaver;
  readonly store: SqlStore;
  close(): Promise<void>;
}

/** Opens the SQL engine chosen by the options, migrates it, and wraps it. */
export async function openStorage(opts: OpenSqlOptions = {}): Promise<Storage> {
  const sql = await openSql({ template: SERVER_TEMPLATE, ...opts });
  try {
    return await createStorage(sql);
  } catch (err) {
    await sql.close().catch(() => {});
    throw err;
  }
}

/** Wraps an open SQL driver (migrating it); closing the storage closes the driver. */
export async function createStorage(sql: SqlDriver): Promise<Storage> {
  await migrate(sql, "server", SERVER_MIGRATIONS);
  const checkpointer = new SqlCheckpointSaver(sql);
  return {
    sql,
    assistants: new AssistantStore(sql),
    threads: new ThreadStore(sql),
    runs: new RunStore(sql),
    crons: new CronStore(sql),
    events: new RunEventLog(sql),
    checkpointer,
    store: new SqlStore(sql),
    close: async () => {
      await checkpointer.flush().catch(() => {});
      await sql.close();
    },
  };
}
