/**
 * What the stream log keeps of one long streamed reply (issue 33): `agentcli dev` on a new
 * project (the harness, its default agent) on either engine, the scripted model server
 * streaming a reply of `tokens` tokens, one chunk each; one run streamed in `messages-tuple`
 * mode to an SDK client, which counts the events and bytes it received; then the server stops
 * (within the log's retention) and the bench counts the run's rows and bytes in the log (run_event_batches and run_events).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import { openSql } from "../core/storage/sql.ts";
import { startModelServer } from "../tests/fixtures/model-server/server.ts";
import { startAgentcliDev, stopTree, waitOk } from "./children.ts";
import { type Engine, PG_URL, schemaUrl } from "./storage-db.ts";

/** One streamed reply: what the client received, and what the log kept of it. */
export interface StreamedReplyLog {
  engine: Engine;
  tokens: number;
  /** Events the client received, and their bytes (event name and data). */
  events: number;
  eventBytes: number;
  /** The run's rows in the log once it ended, and their bytes (a single event's name and data, a batch's text). */
  rows: number;
  rowBytes: number;
}

/** Streams one reply of `tokens` tokens and measures its log (see the module's doc). */
export async function measureStreamedReply(opts: { engine: Engine; tokens: number }): Promise<StreamedReplyLog> {
  const model = await startModelServer();
  model.script({ tokens: opts.tokens }, ...Array.from({ length: 10 }, () => ({ text: "ok" })));
  const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-stream-"));
  const schema = `agentcli_bench_stream_${process.pid}`;
  const admin = opts.engine === "postgres" ? await openSql({ url: PG_URL, poolSize: 1 }) : null;
  try {
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.query(`CREATE SCHEMA ${schema}`);
    const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: model.openaiBaseUrl, OPENAI_API_KEY: "bench" };
    if (admin) env.DATABASE_URL = schemaUrl(schema);
    else delete env.DATABASE_URL;
    const port = await freePort("127.0.0.1");
    const proc = startAgentcliDev(port, dir, env);
    let events = 0;
    let eventBytes = 0;
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitOk(url, performance.now(), proc);
      const client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
      const [assistant] = await client.assistants.search({ limit: 1 });
      if (!assistant) throw new Error("the server has no assistant");
      const th = await client.threads.create();
      const stream = client.runs.stream(th.thread_id, assistant.assistant_id, {
        input: { messages: [{ role: "user", content: "write a long reply" }] },
        streamMode: ["messages-tuple"],
      });
      for await (const part of stream) {
        if (part.event === "error") throw new Error(`the run failed: ${JSON.stringify(part.data)}`);
        events++;
        eventBytes += part.event.length + JSON.stringify(part.data).length;
      }
    } finally {
      await stopTree(proc, 10_000);
    }
    const sql = await openSql(
      admin ? { url: schemaUrl(schema), poolSize: 1 } : { dataDir: join(dir, ".agentcli", "db") },
    );
    try {
      const [row] = (await sql.query<{ n: string; b: string | null }>(
        `SELECT sum(n) AS n, sum(b) AS b FROM (
           SELECT count(*) AS n, sum(octet_length(event) + octet_length(data)) AS b FROM run_events
           UNION ALL SELECT count(*), sum(octet_length(events)) FROM run_event_batches) x`,
      )).rows;
      return {
        engine: opts.engine,
        tokens: opts.tokens,
        events,
        eventBytes,
        rows: Number(row?.n ?? 0),
        rowBytes: Number(row?.b ?? 0),
      };
    } finally {
      await sql.close();
    }
  } finally {
    await model.close();
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await admin?.close();
    if (process.env.BENCH_KEEP) process.stderr.write(`kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
