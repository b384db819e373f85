/**
 * Opens the host's storage: PostgreSQL when `DATABASE_URL` is set, else the embedded database
 * in the data dir. A data dir another process holds is explained in `dev`'s words (dev has no
 * --data-dir: the project's database is its own).
 *
 * @example
 * const opening = openHostStorage({ mode: "dev", options: { dataDir: ".agentcli/db" } });
 * const storage = await opening;
 */
import type { Storage, StorageOptions } from "../../storage/index.ts";

/**
 * Starts opening storage and returns the promise at once, so the server's modules load while
 * a new database restores its template on the I/O threads. The promise is marked handled:
 * the caller awaits it later, or closes what it opened when something else failed first.
 */
export function openHostStorage(o: { mode: "dev" | "serve"; options: StorageOptions }): Promise<Storage> {
  const opening = import("../../storage/index.ts").then(({ openStorage }) => openStorage(o.options)).catch(
    async (err) => {
      const { DataDirLockedError } = await import("../../storage/index.ts");
      if (o.mode !== "dev" || !(err instanceof DataDirLockedError)) throw err;
      // dev has no --data-dir: the project's database is its own.
      throw new DataDirLockedError(
        err.dir,
        err.pid,
        `Another "agentcli dev" (or serve) of this project is running (pid ${err.pid}): use that one, or stop it first. To run several servers on one project's data, set DATABASE_URL to a PostgreSQL database.`,
      );
    },
  );
  opening.catch(() => {});
  return opening;
}

/** Closes the storage `opening` opened, if it did (a start that failed before it was awaited). */
export async function closeOpened(opening: Promise<Storage>): Promise<void> {
  await opening.then((s) => s.close(), () => {});
}
