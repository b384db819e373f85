/**
 * Runs' traces kept locally (issue 35): each run executed here gets a {@link SpanRecorder}
 * when it has a callback handler anyway, else a {@link StreamTrace} built from its stream;
 * its spans are stored with the run's end (../executor/run-end.ts) and kept
 * `AGENTCLI_TRACE_RETENTION_SECONDS` (the TTL sweeper deletes older ones; 0 keeps none and
 * records none). While a run is in flight, the replica executing it answers its spans so far.
 */
import type { Span, StoredTrace } from "../../storage/index.ts";
import type { UsageCallbacks } from "../usage/recorder.ts";
import { SpanRecorder } from "./span-recorder.ts";
import type { TracedRun, TraceEnd, TraceRecorder } from "./spans.ts";
import { StreamTrace, type UsageTap } from "./stream-trace.ts";

/** Default retention of runs' traces: 7 days. */
export const DEFAULT_TRACE_RETENTION_SECONDS = 7 * 86_400;

/** The traces of the runs executing in this process. */
export class LocalTraces {
  readonly #live = new Map<string, TraceRecorder>();
  /** Whether runs are traced (a retention above 0). */
  readonly enabled: boolean;

  constructor(opts: { retentionSeconds: number }) {
    this.enabled = opts.retentionSeconds > 0;
  }

  /**
   * Starts a run's trace: its callback handler (null when traces are off), which feeds the
   * run's usage handler `usage` too (then the only one of the two to attach).
   */
  start(run: TracedRun, usage?: UsageCallbacks | null): SpanRecorder | null {
    if (!this.enabled) return null;
    const recorder = new SpanRecorder(run, usage);
    this.#live.set(run.run_id, recorder);
    return recorder;
  }

  /**
   * Starts a run's trace built from its stream (./stream-trace.ts), for a run without a
   * callback handler anyway (null when traces are off); it feeds the run's usage `usage`.
   */
  startStream(
    run: TracedRun,
    opts: { usage?: UsageTap | null; toolMeta?: (name: string) => Record<string, unknown> | undefined },
  ): StreamTrace | null {
    if (!this.enabled) return null;
    const trace = new StreamTrace(run, opts);
    this.#live.set(run.run_id, trace);
    return trace;
  }

  /** The run's trace to store with its end (null when it was not traced here). */
  stored(runId: string, end: TraceEnd): StoredTrace | null {
    return this.#live.get(runId)?.stored(end) ?? null;
  }

  /** Forgets a run whose end was recorded (or handed over). */
  forget(runId: string): void {
    this.#live.delete(runId);
  }

  /** The spans so far of a run in flight here, or null. */
  live(runId: string): Span[] | null {
    return this.#live.get(runId)?.live() ?? null;
  }
}
