/**
 * LangGraph's checkpointer validation suite (`@langchain/langgraph-checkpoint-validation`)
 * over our `SqlCheckpointSaver`: `npm run test:checkpointer` runs it on PGlite, then on
 * PostgreSQL (`AGENTCLI_CHECKPOINTER_DRIVER=postgres`, a fresh schema per checkpointer).
 */
import type { CheckpointerTestInitializer } from "@langchain/langgraph-checkpoint-validation";
import { SqlCheckpointSaver } from "../../core/storage/checkpointer.ts";
import { SERVER_MIGRATIONS } from "../../core/storage/migrations.ts";
import { migrate, openSql, type SqlDriver } from "../../core/storage/sql.ts";

const onPostgres = process.env.AGENTCLI_CHECKPOINTER_DRIVER === "postgres";
const baseUrl = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const open = new Map<SqlCheckpointSaver, { sql: SqlDriver; drop?: () => Promise<void> }>();

async function openDriver(): Promise<{ sql: SqlDriver; drop?: () => Promise<void> }> {
  if (!onPostgres) return { sql: await openSql({}) };
  const schema = `agentcli_cp_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = await openSql({ url: baseUrl, poolSize: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const sep = baseUrl.includes("?") ? "&" : "?";
  const sql = await openSql({ url: `${baseUrl}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`, poolSize: 4 });
  return {
    sql,
    drop: async () => {
      const a = await openSql({ url: baseUrl, poolSize: 1 });
      await a.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await a.close();
    },
  };
}

const initializer: CheckpointerTestInitializer<SqlCheckpointSaver> = {
  checkpointerName: `agentcli SqlCheckpointSaver (${onPostgres ? "PostgreSQL" : "PGlite"})`,
  beforeAllTimeout: 120_000,
  async createCheckpointer() {
    const driver = await openDriver();
    await migrate(driver.sql, "server", SERVER_MIGRATIONS);
    const saver = new SqlCheckpointSaver(driver.sql);
    open.set(saver, driver);
    return saver;
  },
  async destroyCheckpointer(saver) {
    const driver = open.get(saver);
    open.delete(saver);
    await saver.flush().catch(() => {});
    await driver?.sql.close();
    await driver?.drop?.();
  },
};

export default initializer;
