/**
 * The end of a run: the thread's state after it, recorded with the run's status, its last
 * events and its checkpoints; then the run's channel ends, its webhook is told, runs waiting
 * behind it are woken and a temporary thread goes. One way down: the broker hands over the
 * events it has not logged, then storage writes them with the rest.
 */
import type { DeferredUsage, Run, RunEvent, RunStatus, StoredTrace, ThreadStatus } from "../../storage/index.ts";
import type { CompiledGraph } from "./graphs.ts";
import { graphError, type RunOutcome } from "./run-errors.ts";
import { toWire } from "./serialize.ts";
import { interruptsByTask } from "./state.ts";
import type { ExecutorDeps, RunKwargs } from "./types.ts";

/** How a run ended, and what its end needs of it. */
export interface FinishedRun extends RunOutcome {
  graph: CompiledGraph | null;
  threadConfig: object;
  /** The final state as the stream showed it (null: read it back from the graph). */
  final: { values: unknown } | null;
  /** The run's trace kept locally (../tracing/local-traces.ts), written with its end. */
  trace: StoredTrace | null;
  /** The run's model calls kept for its end (../usage/meter.ts), written with it. */
  usage: DeferredUsage | null;
  /** Set once the statement recording the end wrote `usage` (else the executor records it on its own). */
  usageWritten: boolean;
}

/** What the end of a run has settled so far (a failure to record it changes it). */
interface Ending {
  status: RunStatus;
  output: unknown;
  /** Other runs of the thread are in flight. */
  others: boolean;
  /** Events taken from the broker, not written yet. */
  events: RunEvent[];
  /** The values a webhook is told. */
  finalValues: unknown;
}

/** The thread's state after the run, as recorded with the run's end. */
interface ThreadEnd {
  status: RunStatus;
  values: unknown;
  interrupts: Record<string, unknown[]>;
  threadStatus: ThreadStatus;
  error: unknown;
}

/** Records the end of a run and tells everyone who waits for it. */
export async function finishRun(deps: ExecutorDeps, run: Run, r: FinishedRun): Promise<void> {
  const ending: Ending = {
    status: r.status,
    output: r.errorOut ? { __error__: r.errorOut } : null,
    others: false,
    events: [],
    finalValues: null,
  };
  try {
    if (!(await recordEnd({ deps, run, r, ending }))) return;
  } catch (err) {
    await recordFailure({ deps, run, r, ending, err });
  }
  await announceEnd({ deps, run, r, ending });
}

/** Writes the run's end; false when another replica took the run over first (it records the end). */
async function recordEnd(o: { deps: ExecutorDeps; run: Run; r: FinishedRun; ending: Ending }): Promise<boolean> {
  const { deps: { storage, broker, log }, run, r, ending } = o;
  // The run's claim time (`updated_at` when it became running) bounds what it wrote.
  if (r.rollback) await storage.checkpointer.deleteSince(run.thread_id, run.updated_at);
  const end = await threadEnd(o);
  ending.finalValues = ending.output !== null && !r.errorOut ? ending.output : end.values;
  if (r.rollback) {
    await broker.takeUnflushed(run.run_id);
    await storage.transaction(async (tx) => {
      const inflight = (await storage.runs.inflight(run.thread_id, tx)).filter((x) => x.run_id !== run.run_id);
      ending.others = inflight.length > 0;
      await storage.threads.saveState(run.thread_id, { ...end, status: ending.others ? "busy" : end.threadStatus }, tx);
      await storage.runs.delete(run.run_id, tx);
    });
    return true;
  }
  // The broker first (the events it has not logged), then storage, in one statement: the
  // run's checkpoints not yet written, its last events, the thread's state and the run's
  // status (so its checkpoints are durable with its end).
  // Its log compacted (../broker/compact.ts); a failure to record the end logs the events as they came.
  ending.events = await broker.takeUnflushed(run.run_id);
  const { write: events, replace } = broker.compact(run.run_id, ending.events);
  const done = await storage.checkpointer.flushWith((checkpoints) =>
    storage.runs.complete({ run, end, events, replace, checkpoints, trace: r.trace, usage: r.usage })
  );
  r.usageWritten = true;
  ending.events = [];
  if (done.lost) {
    log.warn(`run ${run.run_id}: another replica took it over before its end was recorded here; it records the end`);
    await broker.handOver(run.run_id);
    return false;
  }
  ending.others = done.busy;
  return true;
}

/**
 * The thread's state after the run: the stream's final values, or the graph's state read
 * back (with its interrupts); sets the run's output from it unless the run failed.
 */
async function threadEnd(o: { deps: ExecutorDeps; run: Run; r: FinishedRun; ending: Ending }): Promise<ThreadEnd> {
  const { deps: { storage, log }, run, r, ending } = o;
  // A refused strict resume ran nothing: the thread keeps the status its state gives it.
  const refused = r.errorOut?.error === "UnknownInterruptError";
  let threadStatus: ThreadStatus = (r.status === "error" || r.status === "timeout") && !refused ? "error" : "idle";
  let values: unknown = null;
  let interrupts: Record<string, unknown[]> = {};
  if (r.final) {
    values = toWire(r.final.values ?? {});
    ending.output = values;
  } else if (r.graph) {
    // A state the graph cannot read back (a node wrote a value its reducer refuses) still
    // ends the run: the thread keeps the values it had.
    const snapshot = await r.graph.getState(r.threadConfig).catch(async (err: unknown) => {
      const e = graphError(err);
      log.warn(
        `run ${run.run_id}: cannot read the thread's state after the run (${e.error}: ${e.message}); it keeps its earlier values`,
      );
      return { values: (await storage.threads.get(run.thread_id))?.values ?? {}, next: [], tasks: [] };
    });
    values = toWire(snapshot.values ?? {});
    interrupts = interruptsByTask(snapshot);
    // Stopped before nodes still to run (an `interrupt()` or a static interrupt_before/after).
    if ((snapshot.next?.length || Object.keys(interrupts).length) && (r.status === "success" || refused)) {
      threadStatus = "interrupted";
    }
    if (!r.errorOut) {
      const all = Object.values(interrupts).flat();
      ending.output = all.length ? { ...(values as object), __interrupt__: all } : values;
    }
  }
  return { status: r.status, values, interrupts, threadStatus, error: r.errorOut };
}

/**
 * The end could not be recorded: the run and its thread still end (never a thread `busy`
 * with no run in flight); if even this fails, the next start frees the thread (WorkerPool.start).
 */
async function recordFailure(
  o: { deps: ExecutorDeps; run: Run; r: FinishedRun; ending: Ending; err: unknown },
): Promise<void> {
  const { deps: { storage, broker, log }, run, ending } = o;
  log.error(`run ${run.run_id}: cannot record the end of the run`, o.err);
  const failure = o.r.errorOut ??
    {
      error: "RunNotRecorded",
      message: "The run ended, but the server could not record its result (see the server log); start the run again.",
    };
  ending.status = "error";
  ending.output = { __error__: failure };
  await broker.writeLog(run.run_id, ending.events).catch(() => {});
  await storage.runs.setStatus(run.run_id, "error", { fromStatuses: ["running"] }).catch(() => {});
  ending.others = await storage.threads.endFailedRun(run.thread_id, failure).catch((e2: unknown) => {
    log.error(`run ${run.run_id}: cannot free its thread ${run.thread_id} (freed at the next start)`, e2);
    return false;
  });
}

/** Ends the run's channel, tells its webhook, wakes the runs behind it, drops a temporary thread. */
async function announceEnd(o: { deps: ExecutorDeps; run: Run; r: FinishedRun; ending: Ending }): Promise<void> {
  const { deps, run, r, ending } = o;
  const { storage, broker, log } = deps;
  const kwargs = run.kwargs as RunKwargs;
  broker.finish(run.run_id, { status: ending.status, output: ending.output });
  if (kwargs.webhook && deps.webhooks) {
    const record = (await storage.runs.get(run.run_id).catch(() => null)) ?? { ...run, status: ending.status };
    deps.webhooks.deliver(run.run_id, kwargs.webhook, {
      ...record,
      values: ending.finalValues,
      error: r.errorOut ? `${r.errorOut.error}: ${r.errorOut.message}` : null,
    });
  }
  // Runs of this thread waiting behind this one can start now (here or on another replica).
  if (ending.others) broker.wake({ broadcast: true });
  if (kwargs.temporary && kwargs.on_completion !== "keep") {
    await storage.threads.delete(run.thread_id).catch(() => {});
    await storage.checkpointer.deleteThread(run.thread_id).catch(() => {});
    await deps.onThreadDeleted?.(run.thread_id).catch((err) =>
      log.warn(
        `thread "${run.thread_id}" was deleted after its run, but not everything of it: ${(err as Error).message}`,
      )
    );
  }
}
