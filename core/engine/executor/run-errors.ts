/**
 * How a run fails: the error a client sees, the time limit's reason, `strict_resume`'s
 * refusal, and which status an error gives the run.
 */
import { UnknownInterruptError } from "@langchain/langgraph";
import { errorText, redact } from "../../kernel/index.ts";
import type { RunStatus } from "../../storage/index.ts";
import { RunCancelled } from "../broker/cancellation.ts";
import { UsageStop } from "../usage/meter.ts";
import type { RunError } from "./types.ts";

/** The reason a run's graph is aborted when it exceeds its time limit. */
export class RunTimedOut extends Error {
  readonly limitMs: number;

  constructor(limitMs: number) {
    super(`The run exceeded its time limit of ${limitMs / 1000} s`);
    this.name = "TimeoutError";
    this.limitMs = limitMs;
  }
}

/**
 * A graph's error as the client sees it: its type and message, without the "Troubleshooting
 * URL: ..." paragraph LangChain appends (documentation noise, not the error), stack frames or
 * install paths a library quoted in the message (../../kernel/error-text.ts).
 */
export function graphError(err: unknown): RunError {
  const e = err instanceof Error ? err : new Error(String(err));
  // Redacted here, so no secret an upstream error quotes reaches the run, its stream or a log.
  const message = redact(errorText(e));
  return { error: e.name || "Error", message: message || e.name || "The run failed" };
}

/** How a run that did not end normally ends: its status, its error, whether its writes go. */
export interface RunOutcome {
  status: RunStatus;
  errorOut: RunError | null;
  rollback: boolean;
}

/**
 * The outcome of a run whose graph threw `err` (`reason`: its signal's abort reason, if
 * aborted). A timeout or a failure is told on the stream (`emit`) and in the log.
 */
export function failedOutcome(opts: {
  runId: string;
  err: unknown;
  reason: unknown;
  emit: (event: string, data: unknown) => void;
  log: { warn(message: string): void };
}): RunOutcome {
  const { runId, reason, emit, log } = opts;
  if (reason instanceof RunCancelled) {
    return { status: "interrupted", errorOut: null, rollback: reason.action === "rollback" };
  }
  if (reason instanceof RunTimedOut) {
    const errorOut = { error: reason.name, message: `${reason.message} (set by AGENTCLI_RUN_TIMEOUT_SECONDS)` };
    emit("error", errorOut);
    log.warn(`run ${runId} timed out after ${reason.limitMs / 1000} s`);
    return { status: "timeout", errorOut, rollback: false };
  }
  if (reason instanceof UsageStop) {
    emit("error", reason.runError);
    log.warn(`run ${runId} stopped: ${reason.message}`);
    return { status: "error", errorOut: reason.runError, rollback: false };
  }
  const errorOut = graphError(opts.err);
  emit("error", errorOut);
  log.warn(`run ${runId} failed: ${errorOut.error}: ${errorOut.message}`);
  return { status: "error", errorOut, rollback: false };
}

/**
 * `strict_resume`: throws UnknownInterruptError, before the graph runs (so nothing is
 * written), when no interrupt is waiting or a resume map (keyed by interrupt ids, as
 * LangGraph decides one) names an interrupt that is not waiting, or when one value answers
 * several waiting interrupts (LangGraph's own strict mode refuses those too).
 */
export function refuseUnmatchedResume(
  snapshot: { tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string }> }> },
  resume: unknown,
): void {
  const pendingIds = [
    ...new Set((snapshot.tasks ?? []).flatMap((t) => (t.interrupts ?? []).flatMap((i) => (i.id ? [i.id] : [])))),
  ].sort();
  const pending = new Set(pendingIds);
  const ids = isPlainObject(resume) && Object.keys(resume).every((k) => /^[0-9a-f]{32}$/.test(k))
    ? Object.keys(resume)
    : null;
  if (ids?.length === 0) {
    throw new UnknownInterruptError(`The resume map names no interrupt; waiting: ${pendingIds.join(", ") || "none"}`, {
      reason: "empty_map",
      pendingIds,
    });
  }
  const unknown = (ids ?? []).filter((id) => !pending.has(id)).sort();
  if (!pendingIds.length) {
    throw new UnknownInterruptError(
      `No interrupt is waiting on this thread${unknown.length ? `; the resume names ${unknown.join(", ")}` : ""}`,
      { reason: "not_pending", interruptIds: unknown, pendingIds },
    );
  }
  if (unknown.length) {
    throw new UnknownInterruptError(
      `Unknown or already-consumed interrupt: ${unknown.join(", ")}; waiting: ${pendingIds.join(", ")}`,
      { reason: "not_pending", interruptIds: unknown, pendingIds },
    );
  }
  if (!ids && pendingIds.length > 1) {
    throw new UnknownInterruptError(
      `Several interrupts are waiting (${pendingIds.join(", ")}); resume with a map keyed by their ids`,
      { reason: "ambiguous", pendingIds },
    );
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
