/**
 * The whole database's bytes after one conversation, on either engine (issue 33: storage
 * that stays flat). `agentcli dev` on a new project, on the embedded database (PGlite) or on
 * PostgreSQL (`DATABASE_URL`, a new schema of AGENTCLI_BENCH_DATABASE_URL); one thread of
 * `turns` turns, each a `runs.wait` with a 1 KB user message; the stream logs' retention
 * passes (`AGENTCLI_STREAM_RETENTION_SECONDS=0`, swept every second: the bench waits for two
 * sweeps); then the server stops, every table is `VACUUM FULL`ed and measured with
 * `pg_total_relation_size` (table, TOAST and indexes), and, on PGlite, the data folder's bytes
 * on disk (its write-ahead log aside).
 *
 * {@link measureStreamedReply}: one run streaming a reply of `tokens` tokens (one chunk each)
 * in `messages-tuple` mode, and what the stream log keeps of it once it ended (within its
 * retention): rows and bytes, against the events and bytes the client received.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import { openSql, type SqlDriver } from "../core/storage/sql.ts";
import { sleep, startAgentcliDev, stopTree, waitOk } from "./children.ts";

export type Engine = "pglite" | "postgres";

export const PG_URL = process.env.AGENTCLI_BENCH_DATABASE_URL ?? process.env.AGENTCLI_TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test";

/** One database after one conversation. */
export interface DatabaseSize {
  engine: Engine;
  turns: number;
  /** Bytes of each table of the server's schema (with its TOAST and indexes). */
  tables: Record<string, number>;
  /** The sum of `tables`. */
  totalBytes: number;
  /** PGlite only: the data folder's bytes on disk (0 on PostgreSQL). */
  folderBytes: number;
  /** Rows left in the stream log after the retention passed (0 expected). */
  logRows: number;
}

/** The bytes of every file under `dir` but its write-ahead log (pg_wal: segments of 16 MB, recycled). */
function folderBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !join(e.parentPath, e.name).includes("/pg_wal/"))
    .reduce((n, e) => n + statSync(join(e.parentPath, e.name)).size, 0);
}

/** A URL of PG_URL whose connections use `schema`. */
export function schemaUrl(schema: string): string {
  const sep = PG_URL.includes("?") ? "&" : "?";
  return `${PG_URL}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** `VACUUM FULL` of every table of the current schema, then each one's total bytes. */
async function tableSizes(sql: SqlDriver): Promise<Record<string, number>> {
  const names = (await sql.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind = 'r' ORDER BY 1`,
  )).rows.map((r) => r.name);
  const out: Record<string, number> = {};
  for (const name of names) {
    await sql.query(`VACUUM FULL "${name}"`);
    const [row] = (await sql.query<{ n: string }>(`SELECT pg_total_relation_size($1::regclass) AS n`, [`"${name}"`]))
      .rows;
    out[name] = Number(row?.n ?? 0);
  }
  return out;
}

/** `turns` turns of a 1 KB message on one thread of a server at `url`. */
async function converse(url: string, turns: number, messageBytes: number): Promise<void> {
  const client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
  const [assistant] = await client.assistants.search({ limit: 1 });
  if (!assistant) throw new Error("the server has no assistant");
  const th = await client.threads.create();
  for (let i = 0; i < turns; i++) {
    const content = `turn ${i}: ${"lorem ipsum ".repeat(messageBytes / 12)}`.slice(0, messageBytes);
    const out = await client.runs.wait(th.thread_id, assistant.assistant_id, {
      input: { messages: [{ role: "user", content }] },
    }) as { messages?: unknown[]; __error__?: unknown };
    if (!out || out.__error__ || (out.messages?.length ?? 0) < 2 * (i + 1)) {
      throw new Error(`unexpected run output: ${JSON.stringify(out).slice(0, 300)}`);
    }
  }
}

/** How long the bench waits for the stream logs to expire: two sweeps of AGENTCLI_TTL_SWEEP_SECONDS=1. */
const EXPIRY_WAIT_MS = 2_500;

export interface MeasureOptions {
  engine: Engine;
  turns: number;
  /** The model's OpenAI base URL. */
  modelUrl: string;
  messageBytes: number;
}

/** A new project and database, one conversation, the database measured (see the module's doc). */
export async function measureDatabase(opts: MeasureOptions): Promise<DatabaseSize> {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-db-"));
  const schema = `agentcli_bench_db_${process.pid}_${opts.turns}`;
  const admin = opts.engine === "postgres" ? await openSql({ url: PG_URL, poolSize: 1 }) : null;
  try {
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.query(`CREATE SCHEMA ${schema}`);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      OPENAI_BASE_URL: opts.modelUrl,
      OPENAI_API_KEY: "bench",
      AGENTCLI_STREAM_RETENTION_SECONDS: "0",
      AGENTCLI_TTL_SWEEP_SECONDS: "1",
    };
    if (admin) env.DATABASE_URL = schemaUrl(schema);
    else delete env.DATABASE_URL;
    const port = await freePort("127.0.0.1");
    const proc = startAgentcliDev(port, dir, env);
    try {
      await waitOk(`http://127.0.0.1:${port}`, performance.now(), proc);
      await converse(`http://127.0.0.1:${port}`, opts.turns, opts.messageBytes);
      await sleep(EXPIRY_WAIT_MS); // the retention passes
    } finally {
      await stopTree(proc, 10_000); // a clean stop: the embedded database is flushed and unlocked
    }
    const dataDir = join(dir, ".agentcli", "db");
    const sql = await openSql(admin ? { url: schemaUrl(schema), poolSize: 1 } : { dataDir });
    let tables: Record<string, number>;
    let logRows: number;
    try {
      logRows = Number(
        (await sql.query<{ n: string }>(
          "SELECT (SELECT count(*) FROM run_events) + (SELECT count(*) FROM run_event_batches) AS n",
        )).rows[0]?.n ?? 0,
      );
      tables = await tableSizes(sql);
      if (!admin) await sql.query("CHECKPOINT");
    } finally {
      await sql.close();
    }
    const totalBytes = Object.values(tables).reduce((a, b) => a + b, 0);
    return {
      engine: opts.engine,
      turns: opts.turns,
      tables,
      totalBytes,
      folderBytes: admin ? 0 : folderBytes(dataDir),
      logRows,
    };
  } finally {
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await admin?.close();
    if (process.env.BENCH_KEEP) process.stderr.write(`kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
