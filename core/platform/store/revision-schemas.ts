/**
 * The schemas of the control plane's PostgreSQL that revisions on this machine get one each
 * (the `local` compute's `ComputeContext.database`): each statement on a connection of its own,
 * closed after it, so no pool of the control plane is held by a compute.
 */
import { openSql } from "../../storage/index.ts";

/** An unquoted PostgreSQL identifier: the name goes into the statement as it is. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

async function run(url: string, statement: (schema: string) => string, name: string): Promise<void> {
  if (!SCHEMA_NAME.test(name)) {
    throw new Error(`a compute asked for schema "${name}", which is not a plain lower-case name`);
  }
  const sql = await openSql({ url, poolSize: 1 });
  try {
    await sql.query(statement(name));
  } finally {
    await sql.close();
  }
}

/** `CREATE SCHEMA IF NOT EXISTS <name>` on the database at `url`. */
export const createRevisionSchema = (url: string, name: string) =>
  run(url, (s) => `CREATE SCHEMA IF NOT EXISTS ${s}`, name);

/** `DROP SCHEMA IF EXISTS <name> CASCADE` on the database at `url`. */
export const dropRevisionSchema = (url: string, name: string) =>
  run(url, (s) => `DROP SCHEMA IF EXISTS ${s} CASCADE`, name);
