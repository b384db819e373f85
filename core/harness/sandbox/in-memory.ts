/**
 * A sandbox manager over an in-memory database of its own, for an agent graph built without
 * a server (tests, embedding): the same code as the server's, mappings lost on close.
 */
import type { Env, HookLogger, PluginDriver } from "../../kernel/index.ts";
import { migrate, openSql, SandboxRecords, SERVER_MIGRATIONS, SERVER_TEMPLATE } from "../../storage/index.ts";
import { SandboxManager, type SandboxSettings } from "./manager.ts";

/** Opens the in-memory manager; `close` releases it and its database. */
export async function inMemorySandboxManager(
  opts: { driver: PluginDriver; env: Env; settings: () => SandboxSettings; log?: HookLogger },
): Promise<{ manager: SandboxManager; close: () => Promise<void> }> {
  const sql = await openSql({ template: SERVER_TEMPLATE });
  await migrate(sql, "server", SERVER_MIGRATIONS);
  const manager = new SandboxManager({
    records: new SandboxRecords(sql),
    driver: opts.driver,
    env: opts.env,
    runtime: null,
    host: null,
    settings: opts.settings,
    log: opts.log,
  });
  return {
    manager,
    close: async () => {
      await manager.close();
      await sql.close();
    },
  };
}
