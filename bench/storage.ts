/**
 * Benchmark: checkpoint storage per conversation turn. `agentcli dev` on a new project (the
 * harness, its default agent) with the OpenAI-wire fixture model (bench/model.ts: "ok" to
 * everything); one thread per length (10, 20, 40 and 80 turns by default), each turn a
 * `runs.wait` with a 1 KB user message. Then the server stops and the bench reads its
 * embedded database: per thread, the bytes of its checkpoints (rows, metadata), channel
 * values and pending writes, and the bytes per turn. Storage that grows with the
 * conversation only (not with its square) keeps bytes per turn flat.
 *
 * Then, per engine (PGlite and PostgreSQL; bench/storage-db.ts), the whole database: a new
 * project per length, the stream logs' retention passed, every table after `VACUUM FULL`, less
 * the same for a conversation of no turns, divided by the turns (issue 33: every table, the
 * stream log included, flat). And per engine, what the stream log keeps of one reply of
 * `--tokens` tokens streamed in `messages-tuple` mode (bench/storage-stream.ts).
 *
 *   npm run bench:storage -- [--turns 10,20,40,80] [--engines pglite,postgres] [--tokens 2000] [--json]
 *
 * `BENCH_KEEP=1` keeps the project directory (and its database) for a look; `BENCH_VERBOSE=1`
 * shows the server's log.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import { openSql } from "../core/storage/sql.ts";
import { startAgentcliDev, startModel, stopTree, waitOk } from "./children.ts";
import { type DatabaseSize, type Engine, measureDatabase } from "./storage-db.ts";
import { measureStreamedReply, type StreamedReplyLog } from "./storage-stream.ts";

const args = process.argv.slice(2);
const turnsArg = args.includes("--turns") ? args[args.indexOf("--turns") + 1] : undefined;
const LENGTHS = (turnsArg ?? "10,20,40,80").split(",").map(Number).filter((n) => n > 0);
const enginesArg = args.includes("--engines") ? args[args.indexOf("--engines") + 1] : undefined;
const ENGINES = (enginesArg ?? "pglite,postgres").split(",").filter((e): e is Engine =>
  e === "pglite" || e === "postgres"
);
const MESSAGE_BYTES = 1024;
const tokensArg = args.includes("--tokens") ? Number(args[args.indexOf("--tokens") + 1]) : 2000;
const TOKENS = Number.isInteger(tokensArg) && tokensArg > 0 ? tokensArg : 2000;

/** Stored bytes of one thread's checkpoints, split by table. */
export interface ThreadStorage {
  turns: number;
  checkpoints: number;
  checkpointBytes: number;
  valueBytes: number;
  writeBytes: number;
  totalBytes: number;
  bytesPerTurn: number;
}

/** Runs the conversations and measures them (see the module's doc). */
export async function measureStorage(lengths: number[] = LENGTHS): Promise<ThreadStorage[]> {
  const model = await startModel();
  const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-storage-"));
  const threads: Array<{ id: string; turns: number }> = [];
  try {
    const port = await freePort("127.0.0.1");
    const env = { ...process.env, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "bench", NO_COLOR: "1" };
    const proc = startAgentcliDev(port, dir, env);
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitOk(url, performance.now(), proc);
      const client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
      const [assistant] = await client.assistants.search({ limit: 1 });
      if (!assistant) throw new Error("the server has no assistant");
      for (const turns of lengths) {
        const th = await client.threads.create();
        threads.push({ id: th.thread_id, turns });
        for (let i = 0; i < turns; i++) {
          const content = `turn ${i}: ${"lorem ipsum ".repeat(MESSAGE_BYTES / 12)}`.slice(0, MESSAGE_BYTES);
          const out = await client.runs.wait(th.thread_id, assistant.assistant_id, {
            input: { messages: [{ role: "user", content }] },
          }) as { messages?: unknown[]; __error__?: unknown };
          if (!out || out.__error__ || (out.messages?.length ?? 0) < 2 * (i + 1)) {
            throw new Error(`unexpected run output: ${JSON.stringify(out).slice(0, 300)}`);
          }
        }
        process.stderr.write(`  ${turns} turns done\n`);
      }
    } finally {
      await stopTree(proc, 10_000); // a clean stop: the embedded database is flushed and unlocked
    }
    const sql = await openSql({ dataDir: join(dir, ".agentcli", "db") });
    try {
      const out: ThreadStorage[] = [];
      for (const t of threads) {
        const one = async (text: string) =>
          Number((await sql.query<{ n: string | null }>(text, [t.id])).rows[0]?.n ?? 0);
        const checkpoints = await one("SELECT count(*) AS n FROM checkpoints WHERE thread_id = $1");
        // Databases from before incremental checkpoints (to measure the old layout) have no
        // checkpoint_blobs and no channel_versions.
        const hasBlobs =
          (await sql.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'checkpoint_blobs'")).rows
            .length > 0;
        const checkpointBytes = await one(
          `SELECT sum(octet_length(checkpoint) + octet_length(metadata) + octet_length(metadata_json::text)${
            hasBlobs ? " + coalesce(octet_length(channel_versions::text), 0)" : ""
          }) AS n
           FROM checkpoints WHERE thread_id = $1`,
        );
        const valueBytes = hasBlobs
          ? await one("SELECT sum(coalesce(octet_length(blob), 0)) AS n FROM checkpoint_blobs WHERE thread_id = $1")
          : 0;
        const writeBytes = await one(
          "SELECT sum(octet_length(value)) AS n FROM checkpoint_writes WHERE thread_id = $1",
        );
        const totalBytes = checkpointBytes + valueBytes + writeBytes;
        out.push({
          turns: t.turns,
          checkpoints,
          checkpointBytes,
          valueBytes,
          writeBytes,
          totalBytes,
          bytesPerTurn: totalBytes / t.turns,
        });
      }
      return out;
    } finally {
      await sql.close();
    }
  } finally {
    model.proc.kill("SIGTERM");
    if (process.env.BENCH_KEEP) process.stderr.write(`kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** Per engine: the database after no turns, then after each length. */
export async function measureDatabases(engines: Engine[] = ENGINES): Promise<DatabaseSize[]> {
  const model = await startModel();
  try {
    const out: DatabaseSize[] = [];
    for (const engine of engines) {
      for (const turns of [0, ...LENGTHS]) {
        out.push(await measureDatabase({ engine, turns, modelUrl: model.url, messageBytes: MESSAGE_BYTES }));
        process.stderr.write(`  ${engine}: ${turns} turns measured\n`);
      }
    }
    return out;
  } finally {
    model.proc.kill("SIGTERM");
  }
}

/** Bytes per turn of each measured length over its engine's empty conversation, by table group. */
function perTurn(sizes: DatabaseSize[]) {
  const group = (t: string) =>
    t.startsWith("checkpoint")
      ? "checkpoints"
      : t === "run_events" || t === "run_event_batches"
      ? "run_events"
      : t === "runs" || t === "threads"
      ? "runs, threads"
      : "other";
  return sizes.filter((s) => s.turns > 0).map((s) => {
    const base = sizes.find((b) => b.engine === s.engine && b.turns === 0)!;
    const groups: Record<string, number> = { checkpoints: 0, run_events: 0, "runs, threads": 0, other: 0 };
    for (const [t, n] of Object.entries(s.tables)) groups[group(t)]! += (n - (base.tables[t] ?? 0)) / s.turns;
    return {
      engine: s.engine,
      turns: s.turns,
      logRows: s.logRows,
      bytesPerTurn: (s.totalBytes - base.totalBytes) / s.turns,
      folderBytesPerTurn: s.engine === "pglite" ? (s.folderBytes - base.folderBytes) / s.turns : null,
      groups,
    };
  });
}

function printDatabases(rows: ReturnType<typeof perTurn>): void {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log("\nThe whole database, per turn (every table after VACUUM FULL, less an empty conversation's):\n");
  console.log(
    "| engine | turns | per turn | checkpoints | run_events | runs, threads | other | data folder per turn | log rows left |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    const g = r.groups;
    const folder = r.folderBytesPerTurn === null ? "-" : kb(r.folderBytesPerTurn);
    console.log(
      `| ${r.engine} | ${r.turns} | ${kb(r.bytesPerTurn)} | ${kb(g.checkpoints!)} | ${kb(g.run_events!)} | ${
        kb(g["runs, threads"]!)
      } | ${kb(g.other!)} | ${folder} | ${r.logRows} |`,
    );
  }
  for (const engine of new Set(rows.map((r) => r.engine))) {
    const mine = rows.filter((r) => r.engine === engine);
    const growth = mine.at(-1)!.bytesPerTurn / mine[0]!.bytesPerTurn;
    console.log(
      `${engine}: bytes per turn, ${mine.at(-1)!.turns} turns vs ${mine[0]!.turns}: ${
        growth.toFixed(2)
      }x (flat within 20%: ${growth <= 1.2 ? "yes" : "no"})`,
    );
  }
}

/** Per engine, one streamed reply of TOKENS tokens (bench/storage-stream.ts). */
async function measureStreamedReplies(engines: Engine[] = ENGINES): Promise<StreamedReplyLog[]> {
  const out: StreamedReplyLog[] = [];
  for (const engine of engines) {
    out.push(await measureStreamedReply({ engine, tokens: TOKENS }));
    process.stderr.write(`  ${engine}: a ${TOKENS}-token reply measured\n`);
  }
  return out;
}

function printStreamedReplies(rows: StreamedReplyLog[]): void {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    `\nOne reply of ${TOKENS} tokens streamed in messages-tuple mode: what the client got, what the log keeps:\n`,
  );
  console.log("| engine | events streamed | bytes streamed | rows kept | bytes kept |");
  console.log("|---|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.engine} | ${r.events} | ${kb(r.eventBytes)} | ${r.rows} | ${kb(r.rowBytes)} |`);
  }
}

if (import.meta.main) {
  process.stderr.write(
    `measuring checkpoint storage (${LENGTHS.join(", ")} turns of a ${MESSAGE_BYTES} B message)...\n`,
  );
  const rows = await measureStorage();
  const databases = perTurn(await measureDatabases());
  const streamed = await measureStreamedReplies();
  const first = rows[0]!;
  const last = rows.at(-1)!;
  const growth = last.bytesPerTurn / first.bytesPerTurn;
  if (args.includes("--json")) {
    console.log(
      JSON.stringify(
        { messageBytes: MESSAGE_BYTES, threads: rows, bytesPerTurnGrowth: growth, databases, streamed },
        null,
        2,
      ),
    );
  } else {
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    console.log(`| turns | checkpoints | checkpoint rows | channel values | writes | total | per turn |`);
    console.log("|---:|---:|---:|---:|---:|---:|---:|");
    for (const r of rows) {
      console.log(
        `| ${r.turns} | ${r.checkpoints} | ${kb(r.checkpointBytes)} | ${kb(r.valueBytes)} | ${kb(r.writeBytes)} | ${
          kb(r.totalBytes)
        } | ${kb(r.bytesPerTurn)} |`,
      );
    }
    console.log(
      `bytes per turn, ${last.turns} turns vs ${first.turns}: ${growth.toFixed(2)}x (flat within 20%: ${
        growth <= 1.2 ? "yes" : "no"
      })`,
    );
    printDatabases(databases);
    printStreamedReplies(streamed);
  }
}
