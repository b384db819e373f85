/**
 * LangGraph's checkpointer validation suite (`@langchain/langgraph-checkpoint-validation`)
 * over our `SqlCheckpointSaver`: `npm run test:checkpointer` runs it on PGlite, then on
 * PostgreSQL (`AGENTCLI_CHECKPOINTER_DRIVER=postgres`, a fresh schema per checkpointer); with
 * `LANGGRAPH_AES_KEY` set, over encrypted checkpoints.
 */
import type { CheckpointSaverTestInitializer } from "@langchain/langgraph-checkpoint-validation";
import { SqlCheckpointSaver } from "../../core/storage/checkpointer.ts";
import { encryptionFromEnv } from "../../core/storage/encryption.ts";
import { SERVER_MIGRATIONS, SERVER_TEMPLATE } from "../../core/storage/migrations.ts";
import { migrate, openSql, type SqlDriver } from "../../core/storage/sql.ts";

const onPostgres = process.env.AGENTCLI_CHECKPOINTER_DRIVER === "postgres";
const baseUrl = process.env.AGENTCLI_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const open = new Map<SqlCheckpointSaver, { sql: SqlDriver; drop?: () => Promise<void> }>();

async function openDriver(): Promise<{ sql: SqlDriver; drop?: () => Promise<void> }> {
  // From the server's template (made once, cached): a cold initdb per checkpointer outlasts the suite's 10 s hooks on a loaded machine.
  if (!onPostgres) return { sql: await openSql({ template: SERVER_TEMPLATE }) };
  const schema = `agentcli_cp_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = await openSql({ url: baseUrl, poolSize: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const sep = baseUrl.includes("?") ? "&" : "?";
  const sql = await openSql({
    url: `${baseUrl}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    poolSize: 4,
  });
  return {
    sql,
    drop: async () => {
      const a = await openSql({ url: baseUrl, poolSize: 1 });
      await a.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await a.close();
    },
  };
}

const initializer: CheckpointSaverTestInitializer<SqlCheckpointSaver> = {
  checkpointerName: `agentcli SqlCheckpointSaver (${onPostgres ? "PostgreSQL" : "PGlite"})`,
  beforeAllTimeout: 120_000,
  async createCheckpointer() {
    const driver = await openDriver();
    await migrate(driver.sql, "server", SERVER_MIGRATIONS);
    // With LANGGRAPH_AES_KEY set, the suite runs over encrypted checkpoints.
    const saver = new SqlCheckpointSaver(driver.sql, { encryption: encryptionFromEnv(process.env) });
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
