/**
 * How runs' traces are stored (issue 35): one `run_traces` row per run, written with the
 * run's end; traces stored before migration 12 (a `run_spans` row per span) are still
 * answered by `GET /threads/{id}/runs/{run_id}/trace` and swept after the retention.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { sqlOf } from "../../core/storage/storage.ts";
import { FIXTURES, startTestServer, until } from "./_harness.ts";

interface Answered {
  spans: { span_id: string; kind: string; name: string; duration_ms: number | null; input: unknown; usage?: unknown }[];
}

test("one row per run; a trace stored a row per span before migration 12 is answered, then swept", async () => {
  const s = await startTestServer({ graphs: FIXTURES, ttl: { traceRetentionSeconds: 1 } });
  try {
    const sql = sqlOf(s.server.storage);
    const thread = await s.client.threads.create();
    await s.client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] } });
    const [run] = await s.client.runs.list(thread.thread_id);
    const url = `${s.url}/threads/${thread.thread_id}/runs/${run!.run_id}/trace`;
    const stored = await sql.query<{ spans: string }>("SELECT spans FROM run_traces WHERE run_id = $1", [run!.run_id]);
    assert.equal(stored.rows.length, 1, "the trace is one row");
    const now = (await (await fetch(url)).json()) as Answered;
    assert.equal(now.spans[0]!.kind, "run", "the run's span starts first");
    assert.equal(now.spans.length, (JSON.parse(stored.rows[0]!.spans) as unknown[]).length);

    // The same run's trace as the table before migration 12 held it, seq not in start order.
    await sql.query("DELETE FROM run_traces WHERE run_id = $1", [run!.run_id]);
    await sql.query(
      `INSERT INTO run_spans (run_id, seq, span_id, parent_id, kind, name, status, started_at, ended_at, data) VALUES
       ($1, 1, 'b', 'a', 'model', 'gpt-test', 'ok', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01.250Z', $2),
       ($1, 2, 'a', NULL, 'run', 'echo', 'ok', '2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z', '{"input":null,"output":null,"attributes":{}}')`,
      [
        run!.run_id,
        JSON.stringify({ input: ["hi"], output: "hello", usage: { input_tokens: 1 }, attributes: { m: 1 } }),
      ],
    );
    const legacy = (await (await fetch(url)).json()) as Answered;
    assert.deepEqual(legacy.spans.map((x) => [x.span_id, x.kind, x.duration_ms]), [["a", "run", 2000], [
      "b",
      "model",
      250,
    ]]);
    assert.deepEqual(legacy.spans[1]!.input, ["hi"]);
    assert.deepEqual(legacy.spans[1]!.usage, { input_tokens: 1 });

    // Both kinds are swept once older than the retention.
    await s.client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "again" }] } });
    await until("the traces swept", async () => {
      await new Promise((r) => setTimeout(r, 200));
      await s.server.sweepExpired();
      const left = await sql.query<{ n: number }>(
        "SELECT (SELECT count(*) FROM run_traces) + (SELECT count(*) FROM run_spans) AS n",
      );
      return Number(left.rows[0]!.n) === 0;
    });
    assert.deepEqual(((await (await fetch(url)).json()) as Answered).spans, []);
  } finally {
    await s.close();
  }
});
