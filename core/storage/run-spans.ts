/**
 * Run traces kept locally: a run's spans (its model calls, tool calls, subagents and graph
 * steps) written with the run's end, in the same statement (./runs/end.ts), as one row of
 * `run_traces` (the spans as one JSON text, sealed with encryption at rest like the stream
 * log); read by the trace endpoint, deleted with their run or by the TTL sweeper once older
 * than the retention. Traces stored before migration 12 (a row per span in `run_spans`) are
 * still read and swept.
 */
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlExecutor } from "./sql.ts";

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

/**
 * How a span's input or output names the run's messages (../engine/tracing/stored-fields.ts):
 * `message`, the field is one; `list`, a list of them; `state`, an object whose `messages` is
 * such a list. A number is a message's place in the trace's `messages`; an object, a message
 * kept inline.
 */
export type MessageRefs = "message" | "list" | "state";

/** A run's trace ready to store: its spans, and the messages their fields name by place (JSON each, redacted). */
export interface StoredTrace {
  spans: StoredSpan[];
  messages: readonly string[];
}

/**
 * A span ready to store: `data` is the JSON of its input, output, error, usage and attributes
 * (redacted), and `refs` when its input or output names messages by their place in the trace.
 */
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
 * The insert of a run's trace as a CTE of the run's end statement: `$1` is the run's id, `lost`
 * the SQL that is true when another replica holds the run (then nothing is written). One row
 * per run (`run_traces`): its spans as one JSON array, each span's `data` embedded as it was
 * serialized (../engine/tracing/spans.ts), sealed once. Measured in PGlite, seven spans as
 * seven rows (jsonb_to_recordset, two index entries each) added 0.7-0.9 ms to the end
 * statement, one row 0.15-0.25 ms (bench/README.md).
 */
export function spansInsert(
  o: { trace: StoredTrace | null; params: unknown[]; enc: AtRestEncryption | null; lost: string },
): string {
  if (!o.trace?.spans.length) return "";
  const text = traceText(o.trace);
  const n = o.params.push(o.enc ? o.enc.sealText(text) : text);
  return `sp AS (INSERT INTO run_traces (run_id, spans) SELECT $1, $${n} WHERE NOT ${o.lost} ON CONFLICT (run_id) DO NOTHING), `;
}

/**
 * The trace as one JSON text, `{"messages":[...],"spans":[...]}`; each span's `data` and each
 * message (JSON already) is embedded, not serialized again. (Before, the text was the array of
 * spans alone, every message inline: still read.)
 */
function traceText(trace: StoredTrace): string {
  const spans = trace.spans.map(({ data, ...head }) => `${JSON.stringify(head).slice(0, -1)},"data":${data}}`);
  return `{"messages":[${trace.messages.join(",")}],"spans":[${spans.join(",")}]}`;
}

/** A span as `run_traces` holds it: its `data` parsed with it. */
type TracedSpan = Omit<StoredSpan, "data"> & { data: SpanData };

/** What a span's `data` holds. */
type SpanData = Pick<Span, "input" | "output" | "error" | "usage" | "attributes"> & {
  refs?: { input?: MessageRefs; output?: MessageRefs };
};

/** A trace's text parsed: its spans, each field's messages put back in place. */
function parseTrace(text: string): TracedSpan[] {
  const parsed = JSON.parse(text) as TracedSpan[] | { messages: unknown[]; spans: TracedSpan[] };
  if (Array.isArray(parsed)) return parsed;
  const { messages, spans } = parsed;
  const message = (m: unknown) => (typeof m === "number" ? messages[m] ?? null : m);
  const list = (l: unknown) => (Array.isArray(l) ? l.map(message) : l);
  const resolve = (value: unknown, refs: MessageRefs | undefined) => {
    if (refs === "message") return message(value);
    if (refs === "list") return list(value);
    if (refs === "state" && value && typeof value === "object") {
      return { ...value, messages: list((value as { messages?: unknown }).messages) };
    }
    return value;
  };
  for (const { data } of spans) {
    if (!data.refs) continue;
    data.input = resolve(data.input, data.refs.input);
    data.output = resolve(data.output, data.refs.output);
    delete data.refs;
  }
  return spans;
}

/** A span as the table before `run_traces` (migration 12) held it, one row each. */
interface LegacySpanRow extends Omit<StoredSpan, "started_at" | "ended_at"> {
  started_at: Date;
  ended_at: Date | null;
}

/** Reading and sweeping runs' traces (`storage.spans`). */
export class RunSpanStore {
  readonly #sql: SqlExecutor;
  readonly #enc: AtRestEncryption | null;
  constructor(sql: SqlExecutor, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
  }

  /** A run's spans, in the order they started (none: the run is in flight, kept no trace, or its trace expired). */
  async read(runId: string): Promise<Span[]> {
    const { rows } = await this.#sql.query<{ spans: string }>(`SELECT spans FROM run_traces WHERE run_id = $1`, [
      runId,
    ]);
    if (!rows[0]) return this.#readLegacy(runId);
    const spans = parseTrace(this.#open(rows[0].spans));
    // In the order they started; spans that started together keep their stored order (a stable sort).
    return spans.sort((a, b) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : 0))
      .map((s) => answered(s, s.data));
  }

  /** A trace stored before migration 12, one row per span (kept until the retention deletes it). */
  async #readLegacy(runId: string): Promise<Span[]> {
    const { rows } = await this.#sql.query<LegacySpanRow>(
      `SELECT span_id, parent_id, kind, name, status, started_at, ended_at, data FROM run_spans
       WHERE run_id = $1 ORDER BY started_at, seq`,
      [runId],
    );
    return rows.map((r) =>
      answered({
        ...r,
        started_at: new Date(r.started_at).toISOString(),
        ended_at: r.ended_at ? new Date(r.ended_at).toISOString() : null,
      }, JSON.parse(this.#open(r.data)) as SpanData)
    );
  }

  #open(text: string): string {
    return this.#enc ? this.#enc.openText(text) : text;
  }

  /**
   * Deletes up to `batch` traces stored more than `retentionSeconds` ago (and as many spans of
   * traces stored before migration 12); resolves the larger of the two counts.
   */
  async sweep(retentionSeconds: number, batch = 5000): Promise<number> {
    const traces = await this.#sql.query(
      `DELETE FROM run_traces WHERE run_id IN (
         SELECT run_id FROM run_traces WHERE created_at < now() - $1::float8 * interval '1 second'
         LIMIT $2 FOR UPDATE SKIP LOCKED
       )`,
      [retentionSeconds, batch],
    );
    const legacy = await this.#sql.query(
      `DELETE FROM run_spans WHERE (run_id, seq) IN (
         SELECT run_id, seq FROM run_spans WHERE created_at < now() - $1::float8 * interval '1 second'
         LIMIT $2 FOR UPDATE SKIP LOCKED
       )`,
      [retentionSeconds, batch],
    );
    return Math.max(traces.rowCount, legacy.rowCount);
  }
}

/** A stored span as the trace endpoint answers it. */
function answered(s: Omit<StoredSpan, "data">, data: SpanData): Span {
  const started = new Date(s.started_at);
  const ended = s.ended_at ? new Date(s.ended_at) : null;
  return {
    span_id: s.span_id,
    parent_id: s.parent_id,
    kind: s.kind,
    name: s.name,
    started_at: started.toISOString(),
    ended_at: ended?.toISOString() ?? null,
    duration_ms: ended ? ended.getTime() - started.getTime() : null,
    status: s.status,
    input: data.input ?? null,
    output: data.output ?? null,
    ...(data.error !== undefined ? { error: data.error } : {}),
    ...(data.usage ? { usage: data.usage } : {}),
    attributes: data.attributes ?? {},
  };
}
