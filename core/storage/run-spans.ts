/**
 * Run traces kept locally: a run's spans (its model calls, tool calls, subagents and graph
 * steps) written with the run's end, in the same statement (./runs/end.ts), read by the
 * trace endpoint, deleted with their run or by the TTL sweeper once older than the retention.
 * A span's input, output, error, usage and attributes are one JSON text (`data`), sealed with
 * encryption at rest like the stream log.
 */
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlExecutor } from "./sql.ts";
import { jsonbText } from "./jsonb.ts";

/** Tokens a model call used (see core/engine/usage/usage-of.ts). */
export interface SpanUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_input_tokens?: number;
  reasoning_tokens?: number;
}

/** One span of a run's trace, as `GET /threads/{thread_id}/runs/{run_id}/trace` answers it. */
export interface Span {
  span_id: string;
  parent_id: string | null;
  kind: "run" | "model" | "tool" | "subagent" | "chain";
  name: string;
  /** ISO time. */
  started_at: string;
  ended_at: string | null;
  duration_ms: number | null;
  status: "ok" | "error" | "running";
  input: unknown;
  output: unknown;
  error?: string;
  usage?: SpanUsage;
  /** Model name, tool call id, `exit_code` of `execute`, MCP server, LangGraph node... */
  attributes: Record<string, unknown>;
}

/** A span ready to store: `data` is the JSON of its input, output, error, usage and attributes (redacted). */
export interface StoredSpan {
  span_id: string;
  parent_id: string | null;
  kind: Span["kind"];
  name: string;
  status: Span["status"];
  started_at: string;
  ended_at: string | null;
  data: string;
}

/**
 * The insert of a run's spans as a CTE of the run's end statement: `$1` is the run's id,
 * `lost` the SQL that is true when another replica holds the run (then nothing is written).
 */
export function spansInsert(
  o: { spans: readonly StoredSpan[]; params: unknown[]; enc: AtRestEncryption | null; lost: string },
): string {
  if (!o.spans.length) return "";
  const rows = o.spans.map((s, i) => ({ ...s, seq: i + 1, data: o.enc ? o.enc.sealText(s.data) : s.data }));
  const n = o.params.push(jsonbText(rows));
  return `sp AS (INSERT INTO run_spans (run_id, seq, span_id, parent_id, kind, name, status, started_at, ended_at, data)
    SELECT $1, x.seq, x.span_id, x.parent_id, x.kind, x.name, x.status, x.started_at, x.ended_at, x.data
    FROM jsonb_to_recordset($${n}::jsonb) AS x(seq int, span_id text, parent_id text, kind text, name text, status text,
      started_at timestamptz, ended_at timestamptz, data text)
    WHERE NOT ${o.lost} ON CONFLICT (run_id, seq) DO NOTHING), `;
}

interface SpanRow {
  span_id: string;
  parent_id: string | null;
  kind: Span["kind"];
  name: string;
  status: Span["status"];
  started_at: Date;
  ended_at: Date | null;
  data: string;
}

/** Reading and sweeping runs' spans (`storage.spans`). */
export class RunSpanStore {
  readonly #sql: SqlExecutor;
  readonly #enc: AtRestEncryption | null;
  constructor(sql: SqlExecutor, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
  }

  /** A run's spans, in the order they started (none: the run is in flight, kept no trace, or its trace expired). */
  async read(runId: string): Promise<Span[]> {
    const { rows } = await this.#sql.query<SpanRow>(
      `SELECT span_id, parent_id, kind, name, status, started_at, ended_at, data FROM run_spans
       WHERE run_id = $1 ORDER BY started_at, seq`,
      [runId],
    );
    return rows.map((r) => {
      const data = JSON.parse(this.#enc ? this.#enc.openText(r.data) : r.data) as Pick<
        Span,
        "input" | "output" | "error" | "usage" | "attributes"
      >;
      const started = new Date(r.started_at);
      const ended = r.ended_at ? new Date(r.ended_at) : null;
      return {
        span_id: r.span_id,
        parent_id: r.parent_id,
        kind: r.kind,
        name: r.name,
        started_at: started.toISOString(),
        ended_at: ended?.toISOString() ?? null,
        duration_ms: ended ? ended.getTime() - started.getTime() : null,
        status: r.status,
        input: data.input ?? null,
        output: data.output ?? null,
        ...(data.error !== undefined ? { error: data.error } : {}),
        ...(data.usage ? { usage: data.usage } : {}),
        attributes: data.attributes ?? {},
      };
    });
  }

  /** Deletes up to `batch` spans stored more than `retentionSeconds` ago; resolves how many. */
  async sweep(retentionSeconds: number, batch = 5000): Promise<number> {
    const { rowCount } = await this.#sql.query(
      `DELETE FROM run_spans WHERE (run_id, seq) IN (
         SELECT run_id, seq FROM run_spans WHERE created_at < now() - $1::float8 * interval '1 second'
         LIMIT $2 FOR UPDATE SKIP LOCKED
       )`,
      [retentionSeconds, batch],
    );
    return rowCount;
  }
}
