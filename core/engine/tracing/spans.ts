/**
 * A run's spans in memory and as they are answered and stored, whoever builds them: the
 * callback handler (./span-recorder.ts) or the reader of the run's `tasks` stream
 * (./stream-trace.ts). Nothing is serialized while the run goes: at its end,
 * {@link storedSpans} turns the spans into JSON once (./stored-fields.ts: each message once
 * per run, each input and output cut at {@link MAX_FIELD_CHARS}, {@link MAX_RUN_CHARS} in
 * all, everything redacted).
 */
import { redact } from "../../kernel/index.ts";
import type { Span, StoredSpan, StoredTrace } from "../../storage/index.ts";
import { toWire } from "../executor/serialize.ts";
import type { TokenUsage } from "../usage/usage-of.ts";
import { MAX_FIELD_CHARS, MAX_RUN_CHARS, StoredFields } from "./stored-fields.ts";

export { MAX_FIELD_CHARS, MAX_RUN_CHARS };

export interface OpenSpan {
  id: string;
  parent: string | null;
  kind: Span["kind"];
  name: string;
  start: number;
  end: number | null;
  failed: boolean;
  input: unknown;
  output: unknown;
  error?: string;
  usage?: TokenUsage;
  attributes: Record<string, unknown>;
}

/** What a run's trace starts with. */
export interface TracedRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  graph_id: string;
  attempt: number;
}

/** How the run ended, for its root span. */
export interface TraceEnd {
  status: string;
  error?: string | null;
}

/** One run's trace, however it is built: its spans so far, and at its end those to store. */
export interface TraceRecorder {
  live(): Span[];
  stored(end: TraceEnd): StoredTrace;
}

/** The root span of a run (its id is the run's). */
export function rootSpan(run: TracedRun): OpenSpan {
  return {
    id: run.run_id,
    parent: null,
    kind: "run",
    name: run.graph_id,
    start: Date.now(),
    end: null,
    failed: false,
    input: null,
    output: null,
    attributes: { thread_id: run.thread_id, assistant_id: run.assistant_id, attempt: run.attempt },
  };
}

/** The spans so far, as the trace endpoint answers them (calls in flight are `running`). */
export function liveSpans(spans: readonly OpenSpan[]): Span[] {
  const budget = { left: MAX_RUN_CHARS };
  return spans.map((s) => toSpan(s, budget));
}

/**
 * Ends the root span (`spans[0]`) and answers every span ready to store; a call still open
 * ends with the run, `error` (`openError`, when given, says why: the stream-built trace does
 * not see a failed call's own error when the run stops on it).
 */
export function storedSpans(spans: readonly OpenSpan[], end: TraceEnd, openError?: string): StoredTrace {
  const now = Date.now();
  const root = spans[0]!;
  root.attributes.run_status = end.status;
  if (end.error) root.error = end.error;
  root.failed = end.status === "error" || end.status === "timeout";
  for (const s of spans) {
    if (s.end !== null) continue;
    s.end = now;
    if (s !== root) {
      s.failed = true;
      s.error ??= openError ?? `the run ended (${end.status}) before this call finished`;
    }
  }
  const fields = new StoredFields();
  return { spans: spans.map((s) => storedSpan(s, fields)), messages: fields.messages };
}

/** A span as stored: its input and output serialized once (the JSON measured is the JSON stored), then redacted. */
function storedSpan(s: OpenSpan, fields: StoredFields): StoredSpan {
  const input = fields.field(s.input);
  const output = fields.field(s.output);
  const error = s.error !== undefined ? `,"error":${JSON.stringify(redact(s.error))}` : "";
  const usage = s.usage ? `,"usage":${JSON.stringify(s.usage)}` : "";
  // Which fields name messages by place (undefined keys drop out of the JSON).
  const refs = input.refs || output.refs ? `,"refs":${JSON.stringify({ input: input.refs, output: output.refs })}` : "";
  return {
    span_id: s.id,
    parent_id: s.parent,
    kind: s.kind,
    name: s.name,
    status: s.failed ? "error" : "ok",
    started_at: new Date(s.start).toISOString(),
    ended_at: new Date(s.end ?? s.start).toISOString(),
    data: redact(
      `{"input":${input.json},"output":${output.json}${error}${usage},"attributes":${
        JSON.stringify(s.attributes)
      }${refs}}`,
    ),
  };
}

/** A tool span's output read as the handler and the stream both see it: a failed ToolMessage fails it; `execute`'s exit code. */
export function endTool(s: OpenSpan, output: unknown): void {
  const message = output as { status?: unknown; content?: unknown } | null;
  const text = typeof message?.content === "string" ? message.content : typeof output === "string" ? output : null;
  // A tool's failure the model is told about (a ToolMessage with status "error") is the span's error too.
  if (message?.status === "error") {
    s.failed = true;
    s.error = text ?? "the tool failed";
  }
  if (s.attributes.tool === "execute" && text) {
    const exit = /\[Command (?:succeeded|failed) with exit code (-?\d+)\]\s*$/.exec(text);
    s.attributes.exit_code = exit ? Number(exit[1]) : null;
    if (/\[Command timed out after /.test(text)) s.attributes.timed_out = true;
  }
}

/**
 * An input or output as the live trace answers it: API JSON, cut at {@link MAX_FIELD_CHARS}
 * (its size only once the run's budget is spent); `json` is `wire`'s JSON text.
 */
function fieldOf(value: unknown, budget: { left: number }): { wire: unknown; json: string } {
  if (value === null || value === undefined) return { wire: null, json: "null" };
  const wire = toWire(value);
  const json = JSON.stringify(wire) ?? "null";
  const cut = (w: Record<string, unknown>) => ({ wire: w, json: JSON.stringify(w) });
  if (budget.left <= 0) return cut({ truncated: true, chars: json.length });
  budget.left -= Math.min(json.length, MAX_FIELD_CHARS);
  return json.length <= MAX_FIELD_CHARS
    ? { wire, json }
    : cut({ truncated: true, chars: json.length, preview: json.slice(0, MAX_FIELD_CHARS) });
}

function toSpan(s: OpenSpan, budget: { left: number }): Span {
  return {
    span_id: s.id,
    parent_id: s.parent,
    kind: s.kind,
    name: s.name,
    started_at: new Date(s.start).toISOString(),
    ended_at: s.end === null ? null : new Date(s.end).toISOString(),
    duration_ms: s.end === null ? null : s.end - s.start,
    status: s.end === null ? "running" : s.failed ? "error" : "ok",
    input: fieldOf(s.input, budget).wire,
    output: fieldOf(s.output, budget).wire,
    ...(s.error !== undefined ? { error: redact(s.error) } : {}),
    ...(s.usage ? { usage: s.usage } : {}),
    attributes: s.attributes,
  };
}
