/**
 * Executes one claimed run: loads the assistant's graph, streams it in the requested modes
 * into the broker (which logs every event durably), then records the thread's state and the
 * run's final status. Cancellation aborts the graph; "rollback" also removes what the run
 * wrote. The stages are files of their own: ./run-graph.ts (set-up and stream, with
 * ./run-config.ts), ./run-errors.ts (how it fails), ./run-end.ts (its end).
 */
import { redact } from "../../kernel/index.ts";
import { LeaseLost } from "../broker/cancellation.ts";
import { UsageStop } from "../usage/meter.ts";
import { finishRun } from "./run-end.ts";
import { failedOutcome, type RunOutcome, RunTimedOut } from "./run-errors.ts";
import { runGraph, type RunProgress } from "./run-graph.ts";
import type { Emit } from "./stream-modes.ts";
import type { ExecutableRun, ExecutorDeps, ResumeOptions } from "./types.ts";

export type { ExecutableRun, ExecutorDeps, ResumeOptions, RunKwargs } from "./types.ts";
export { graphError } from "./run-errors.ts";

/** Runs `run` to its end; never throws (failures become the run's `error` status). */
export async function executeRun(deps: ExecutorDeps, run: ExecutableRun, resume: ResumeOptions = {}): Promise<void> {
  const { signal, emit, stopTimer } = await beginRun(deps, run, resume);
  const progress: RunProgress = {
    graph: null,
    runEnded: () => {},
    trace: null,
    usage: null,
    final: null,
    interrupted: false,
  };
  let outcome: RunOutcome = { status: "success", errorOut: null, rollback: false };
  try {
    await runGraph({ deps, run, resume, signal, emit, progress });
    // A run whose last model call crossed a daily budget ends as one stopped by it would: its
    // answer is in the thread's state (the call was made), its end is the error naming the limit.
    await progress.usage?.settled();
    if (progress.usage?.signal.aborted) throw progress.usage.signal.reason;
  } catch (err) {
    const reason = signal.aborted
      ? signal.reason
      : progress.usage?.signal.aborted
      ? progress.usage.signal.reason
      : err instanceof UsageStop
      ? err
      : null;
    if (reason instanceof LeaseLost) {
      stopTimer();
      await handOver(deps, run, progress);
      return;
    }
    outcome = failedOutcome({ runId: run.run_id, err, reason, emit, log: deps.log });
  }
  stopTimer();
  // A run no budget applies to kept its calls for the statement that records its end.
  const usage = progress.usage?.takeDeferred() ?? null;
  await progress.usage?.flush();
  progress.runEnded();
  deps.storage.checkpointer.forgetRun(run.run_id);
  const { status, errorOut } = outcome;
  const ended = progress.interrupted && status === "success" ? "interrupted" : status;
  progress.trace?.end(ended, errorOut?.message);
  const finished = {
    ...outcome,
    graph: progress.graph,
    threadConfig: { configurable: { thread_id: run.thread_id } },
    final: status === "success" && !progress.interrupted ? progress.final : null,
    trace: deps.traces?.stored(run.run_id, {
      status: ended,
      error: errorOut ? `${errorOut.error}: ${errorOut.message}` : null,
    }) ?? null,
    usage,
    usageWritten: false,
  };
  await finishRun(deps, run, finished);
  if (usage && !finished.usageWritten) await deps.usage?.recordDeferred(run.run_id, usage);
  deps.traces?.forget(run.run_id);
}

/**
 * Starts the run here: its channel (a resumed run's stream goes on after what its first
 * replica logged), its abort signal (cancellation, and the time limit), and its first event.
 */
async function beginRun(
  deps: ExecutorDeps,
  run: ExecutableRun,
  resume: ResumeOptions,
): Promise<{ signal: AbortSignal; emit: Emit; stopTimer: () => void }> {
  const { storage, broker } = deps;
  // A resumed run's stream goes on after what its first replica logged (ids stay consecutive).
  const prior = resume.resumed ? await broker.logged(run.run_id).catch(() => []) : undefined;
  const cancelSignal = broker.start(run.run_id, prior);
  // Its thread had no checkpoint when it was claimed: the graph's first read of one is skipped.
  // Once: a retried execution may find checkpoints of the first.
  if (run.threadEmpty && !resume.resumed) storage.checkpointer.expectEmpty(run.run_id, run.thread_id);
  run.threadEmpty = false;
  if (resume.cancelled) broker.cancel(run.run_id, resume.cancelled);
  const limit = deps.runTimeoutMs && deps.runTimeoutMs > 0 ? new AbortController() : null;
  const timer = limit ? setTimeout(() => limit.abort(new RunTimedOut(deps.runTimeoutMs!)), deps.runTimeoutMs) : null;
  const signal = limit ? AbortSignal.any([cancelSignal, limit.signal]) : cancelSignal;
  // Every event is redacted: debug and events modes carry upstream errors verbatim.
  const emit: Emit = (event, data, redacted) =>
    broker.publish(run.run_id, {
      event,
      data: redacted && typeof data === "string"
        ? data
        : redact(typeof data === "string" ? data : JSON.stringify(data)),
    });
  // Claiming the run logged this first event already; a resumed run says so on its stream.
  if (resume.resumed) {
    broker.publish(run.run_id, {
      event: "metadata",
      data: `{"run_id":"${run.run_id}","attempt":${run.attempt},"resumed":true}`,
    });
  } else {
    broker.publish(run.run_id, {
      event: "metadata",
      data: `{"run_id":"${run.run_id}","attempt":${run.attempt}}`,
      durable: true,
    });
  }
  return { signal, emit, stopTimer: () => timer && clearTimeout(timer) };
}

/** Another replica took the run over (this one lost its lease): it records the run's end, not this one. */
async function handOver(deps: ExecutorDeps, run: ExecutableRun, progress: RunProgress): Promise<void> {
  progress.runEnded();
  deps.storage.checkpointer.forgetRun(run.run_id);
  deps.log.warn(
    `run ${run.run_id}: another replica took it over (this one could not renew its lease in time); stopped here`,
  );
  progress.trace?.end("handed_over");
  deps.traces?.forget(run.run_id);
  await progress.usage?.flush();
  await deps.broker.handOver(run.run_id);
}
