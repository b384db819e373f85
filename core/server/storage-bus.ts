/** Opens the Agent API's storage (unless given open) and its cross-replica bus (for ./app.ts). */
import type { ServerLog } from "../kernel/index.ts";
import { openStorage, type Storage, type StorageOptions } from "../storage/index.ts";
import type { RemoteBus } from "../engine/index.ts";
import type { AgentServerOptions } from "./app.ts";

/** The bus is Redis when `redisUrl` is given, else PostgreSQL's LISTEN/NOTIFY on a shared database, else none. */
export async function openStorageAndBus(
  opts: AgentServerOptions,
  log: ServerLog,
): Promise<{ storage: Storage; ownStorage: boolean; remote: RemoteBus | null }> {
  const ownStorage = !opts.storage || !("runs" in opts.storage);
  const storage = ownStorage ? await openStorage((opts.storage ?? {}) as StorageOptions) : (opts.storage as Storage);
  let remote: RemoteBus | null = null;
  try {
    const pgUrl = opts.databaseUrl ?? (ownStorage ? (opts.storage as StorageOptions | undefined)?.url : undefined);
    if (opts.redisUrl) {
      remote = await (await import("../engine/index.ts")).openRedisBus(opts.redisUrl, log, {
        connectWithinMs: opts.connectWithinMs,
      });
    } else if (pgUrl && storage.kind === "postgres") {
      remote = await (await import("../engine/index.ts")).openPostgresBus(pgUrl, log);
    }
  } catch (err) {
    if (ownStorage) await storage.close();
    throw err;
  }
  return { storage, ownStorage, remote };
}
