/**
 * Executes one claimed run: loads the assistant's graph, streams it in the requested modes
 * into the broker (which logs every event durably), then records the thread's state and the
 * run's final status. Cancellation aborts the graph; "rollback" also removes what the run
 * wrote.
 */
import type { RunTrace, RunTracer } from "../tracing/tracing.ts";
import { errorText, redact, type ServerLog } from "../../kernel/index.ts";
import { Command, UnknownInterruptError } from "@langchain/langgraph";
import type { ClaimedRun, Json, Run, RunEvent, RunStatus, Storage, ThreadStatus } from "../../storage/index.ts";
import { type CancelAction, LeaseLost, type RunBroker, RunCancelled } from "../broker/broker.ts";
import type { GraphRegistry } from "./graphs.ts";
import { ChunkTranslator, libModes, type LibStreamMode, type StreamMode } from "./stream-modes.ts";
import { interruptsByTask } from "./state.ts";
import { toWire } from "./serialize.ts";
import type { WebhookSender } from "../runs/webhooks.ts";

export interface ExecutorDeps {
  storage: Storage;
  broker: RunBroker;
  graphs: GraphRegistry;
  log: ServerLog;
  /** A run still executing after this long is stopped and ends `timeout` (no limit when absent or 0). */
  runTimeoutMs?: number;
  /** Cleans up what lives outside the database for a thread deleted after its run (its sandbox). */
  onThreadDeleted?: (threadId: string) => Promise<void>;
  /** Sends the result of runs that have a `webhook`. */
  webhooks?: WebhookSender;
  /** Traces runs (OpenTelemetry, ../tracing/tracing.ts) when configured. */
  tracer?: RunTracer | null;
}

/** The reason a run's graph is aborted when it exceeds its time limit. */
export class RunTimedOut extends Error {
  readonly limitMs: number;

  constructor(limitMs: number) {
    super(`The run exceeded its time limit of ${limitMs / 1000} s`);
    this.name = "TimeoutError";
    this.limitMs = limitMs;
  }
}

/** The run's request as stored in `runs.kwargs`. */
export interface RunKwargs {
  input?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown } | null;
  config?: {
    configurable?: Record<string, unknown>;
    tags?: string[];
    recursion_limit?: number;
    run_name?: string;
    max_concurrency?: number;
    [k: string]: unknown;
  };
  context?: unknown;
  stream_mode?: StreamMode[];
  stream_subgraphs?: boolean;
  interrupt_before?: string[] | "*";
  interrupt_after?: string[] | "*";
  checkpoint_id?: string;
  checkpoint?: { checkpoint_id?: string; checkpoint_ns?: string } | null;
  durability?: "sync" | "async" | "exit";
  checkpoint_during?: boolean;
  on_completion?: "delete" | "keep";
  temporary?: boolean;
  strict_resume?: boolean;
  /** Told the run's final result (../runs/webhooks.ts). */
  webhook?: string;
}

/** How a run taken over from a replica that died is executed (see worker.ts). */
export interface ResumeOptions {
  /** The run was running on another replica: it continues from its last checkpoint, its stream from its last logged event. */
  resumed?: boolean;
  /** Cancelled while its replica was gone: it ends as a cancel would have ended it. */
  cancelled?: CancelAction;
  /** It cannot resume (too many attempts): it ends `error` with this, its stream with an `error` event. */
  fail?: { error: string; message: string };
}

/**
 * A run to execute, with what its creator already read: its assistant and its thread's
 * metadata (then the executor does not read them again).
 */
export type ExecutableRun = Run & { assistant?: ClaimedRun["assistant"]; threadMetadata?: Json; threadEmpty?: boolean };

/** Runs `run` to its end; never throws (failures become the run's `error` status). */
export async function executeRun(deps: ExecutorDeps, run: ExecutableRun, resume: ResumeOptions = {}): Promise<void> {
  const { storage, broker, graphs, log } = deps;
  const kwargs = run.kwargs as RunKwargs;
  // A resumed run's stream goes on after what its first replica logged (ids stay consecutive).
  const prior = resume.resumed ? await storage.events.read(run.run_id).catch(() => []) : undefined;
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
  const emit = (event: string, data: unknown) =>
    broker.publish(run.run_id, event, redact(typeof data === "string" ? data : JSON.stringify(data)));
  // Claiming the run logged this first event already; a resumed run says so on its stream.
  if (resume.resumed) {
    broker.publish(run.run_id, "metadata", `{"run_id":"${run.run_id}","attempt":${run.attempt},"resumed":true}`);
  } else {broker.publish(run.run_id, "metadata", `{"run_id":"${run.run_id}","attempt":${run.attempt}}`, {
      durable: true,
    });}
  let status: RunStatus = "success";
  let errorOut: { error: string; message: string } | null = null;
  let rollback = false;
  let graph: Awaited<ReturnType<GraphRegistry["get"]>> | null = null;
  const threadConfig = { configurable: { thread_id: run.thread_id } };
  // The final state, as the stream showed it; null when it must be read back (see finishRun).
  let final: { values: unknown } | null = null;
  let runEnded = () => {};
  let interrupted = false;
  let runTrace: RunTrace | null = null;
  try {
    const assistant = run.assistant ?? (await storage.assistants.get(run.assistant_id));
    if (!assistant) throw new Error(`assistant "${run.assistant_id}" no longer exists`);
    const modes: StreamMode[] = kwargs.stream_mode?.length ? kwargs.stream_mode : ["values"];
    const aConfig = (assistant.config ?? {}) as RunKwargs["config"] & object;
    const rConfig = kwargs.config ?? {};
    // A resumed run whose first replica checkpointed goes on from its latest checkpoint (no
    // input, no checkpoint_id); one that checkpointed nothing starts again from its input.
    const fromCheckpoint = Boolean(resume.resumed) &&
      ((await storage.checkpointer.getTuple(threadConfig))?.metadata as { run_id?: unknown } | undefined)?.run_id ===
        run.run_id;
    const checkpointId = fromCheckpoint ? undefined : kwargs.checkpoint_id ?? kwargs.checkpoint?.checkpoint_id;
    const recursionLimit = rConfig.recursion_limit ?? aConfig.recursion_limit;
    const runName = rConfig.run_name ?? aConfig.run_name;
    const maxConcurrency = rConfig.max_concurrency ?? aConfig.max_concurrency;
    const { recursion_limit: _a, run_name: _an, max_concurrency: _am, ...aRest } = aConfig;
    const { recursion_limit: _r, run_name: _rn, max_concurrency: _rm, ...rRest } = rConfig;
    const durability = kwargs.durability ??
      (kwargs.checkpoint_during === undefined ? undefined : kwargs.checkpoint_during ? "async" : "exit");
    // As on LangGraph's server, the thread's and the run's metadata become the run's (and so
    // its checkpoints') metadata, beside the ids the checkpointer adds from `configurable`.
    const threadMetadata = run.threadMetadata ?? (await storage.threads.get(run.thread_id))?.metadata;
    const aContext = assistant.context;
    const rContext = kwargs.context;
    const context = isPlainObject(aContext) && isPlainObject(rContext)
      ? { ...aContext, ...rContext }
      : rContext ?? aContext ?? undefined;
    const base = {
      ...aRest,
      ...rRest,
      ...(recursionLimit !== undefined ? { recursionLimit } : {}),
      ...(runName !== undefined ? { runName } : {}),
      ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
      ...(durability !== undefined ? { durability } : {}),
      tags: [...(aConfig.tags ?? []), ...(rConfig.tags ?? [])],
      // `run_id` in the checkpoints' metadata tells a resumed run which checkpoints are its own.
      metadata: { ...(threadMetadata ?? {}), ...(run.metadata ?? {}), run_id: run.run_id, run_attempt: run.attempt },
      configurable: {
        ...(aConfig.configurable ?? {}),
        ...(rConfig.configurable ?? {}),
        thread_id: run.thread_id,
        run_id: run.run_id,
        assistant_id: run.assistant_id,
        graph_id: assistant.graph_id,
        ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
        ...(kwargs.checkpoint?.checkpoint_ns ? { checkpoint_ns: kwargs.checkpoint.checkpoint_ns } : {}),
      },
      context,
    };
    graph = await graphs.get(assistant.graph_id, base);
    runEnded = graphs.runStarted(graph);
    runTrace = deps.tracer?.startRun({
      run_id: run.run_id,
      thread_id: run.thread_id,
      assistant_id: run.assistant_id,
      graph_id: assistant.graph_id,
      attempt: run.attempt,
    }) ?? null;
    if (resume.fail) throw Object.assign(new Error(resume.fail.message), { name: resume.fail.error });
    // The root "values" stream ends with the thread's state when the graph streams all of its
    // state channels; then the state need not be read back after the run. A run that may stop
    // at a static interrupt ends with its state read back (its `next`).
    const streamsState = sameKeys(graph.outputChannels, graph.streamChannelsAsIs) && !kwargs.interrupt_before?.length &&
      !kwargs.interrupt_after?.length &&
      !graph.interruptBefore?.length && !graph.interruptAfter?.length;
    const config = {
      ...base,
      ...(runTrace ? { callbacks: runTrace.callbacks } : {}),
      runId: run.run_id,
      signal,
      streamMode: streamsState ? [...new Set([...libModes(modes), "values" as const])] : libModes(modes),
      subgraphs: Boolean(kwargs.stream_subgraphs),
      interruptBefore: kwargs.interrupt_before,
      interruptAfter: kwargs.interrupt_after,
    };
    if (kwargs.strict_resume && kwargs.command?.resume !== undefined) {
      const at = {
        configurable: { thread_id: run.thread_id, ...(checkpointId ? { checkpoint_id: checkpointId } : {}) },
      };
      refuseUnmatchedResume(await graph.getState(at), kwargs.command.resume);
    }
    const input = fromCheckpoint ? null : kwargs.command
      ? new Command({
        resume: kwargs.command.resume,
        update: kwargs.command.update as never,
        goto: kwargs.command.goto as never,
      })
      : kwargs.input ?? null;
    const translator = new ChunkTranslator(modes);
    const onChunk = (chunk: unknown) => {
      const parts = chunk as unknown[];
      const [ns, mode, payload] = parts.length === 3 ? parts : [[], ...parts];
      if (mode === "values" || mode === "updates") {
        if (payload && typeof payload === "object" && "__interrupt__" in payload) interrupted = true;
        else if (mode === "values" && streamsState && !(ns as string[])?.length) final = { values: payload };
      }
      translator.translate((ns as string[]) ?? [], mode as LibStreamMode, payload, emit);
    };
    if (modes.includes("events")) {
      for await (const ev of graph.streamEvents(input, { ...config, version: "v2" })) {
        if (ev.event === "on_chain_stream" && (ev.parent_ids?.length ?? 0) === 0 && ev.run_id === run.run_id) {
          onChunk(ev.data.chunk);
        } else emit("events", toWire(ev));
      }
    } else {
      for await (const chunk of await graph.stream(input, config)) onChunk(chunk);
    }
    translator.complete(emit);
  } catch (err) {
    const reason = signal.aborted ? signal.reason : null;
    if (reason instanceof LeaseLost) {
      // Another replica took the run over: it records the run's end, not this one.
      if (timer) clearTimeout(timer);
      runEnded();
      storage.checkpointer.forgetRun(run.run_id);
      log.warn(
        `run ${run.run_id}: another replica took it over (this one could not renew its lease in time); stopped here`,
      );
      runTrace?.end("handed_over");
      await broker.handOver(run.run_id);
      return;
    }
    if (reason instanceof RunCancelled) {
      status = "interrupted";
      rollback = reason.action === "rollback";
    } else if (reason instanceof RunTimedOut) {
      status = "timeout";
      errorOut = { error: reason.name, message: `${reason.message} (set by AGENTCLI_RUN_TIMEOUT_SECONDS)` };
      emit("error", errorOut);
      log.warn(`run ${run.run_id} timed out after ${reason.limitMs / 1000} s`);
    } else {
      status = "error";
      errorOut = graphError(err);
      emit("error", errorOut);
      log.warn(`run ${run.run_id} failed: ${errorOut.error}: ${errorOut.message}`);
    }
  }
  if (timer) clearTimeout(timer);
  runEnded();
  storage.checkpointer.forgetRun(run.run_id);
  runTrace?.end(interrupted && status === "success" ? "interrupted" : status, errorOut?.message);
  await finishRun(deps, run, {
    status,
    errorOut,
    rollback,
    graph,
    threadConfig,
    final: status === "success" && !interrupted ? final : null,
  });
}

/**
 * A graph's error as the client sees it: its type and message, without the "Troubleshooting
 * URL: ..." paragraph LangChain appends (documentation noise, not the error), stack frames or
 * install paths a library quoted in the message (../../kernel/error-text.ts).
 */
export function graphError(err: unknown): { error: string; message: string } {
  const e = err instanceof Error ? err : new Error(String(err));
  // Redacted here, so no secret an upstream error quotes reaches the run, its stream or a log.
  const message = redact(errorText(e));
  return { error: e.name || "Error", message: message || e.name || "The run failed" };
}

/**
 * `strict_resume`: throws UnknownInterruptError, before the graph runs (so nothing is
 * written), when no interrupt is waiting or a resume map (keyed by interrupt ids, as
 * LangGraph decides one) names an interrupt that is not waiting, or when one value answers
 * several waiting interrupts (LangGraph's own strict mode refuses those too).
 */
function refuseUnmatchedResume(
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

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function sameKeys(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((k) => set.has(k));
}

async function finishRun(
  deps: ExecutorDeps,
  run: Run,
  r: {
    status: RunStatus;
    errorOut: { error: string; message: string } | null;
    rollback: boolean;
    graph: unknown;
    threadConfig: object;
    final: { values: unknown } | null;
  },
): Promise<void> {
  const { storage, broker, log } = deps;
  let output: unknown = r.errorOut ? { __error__: r.errorOut } : null;
  let status = r.status;
  let others = false;
  let events: RunEvent[] = [];
  let finalValues: unknown = null;
  try {
    // The run's claim time (`updated_at` when it became running) bounds what it wrote.
    if (r.rollback) await storage.checkpointer.deleteSince(run.thread_id, run.updated_at);
    // A refused strict resume ran nothing: the thread keeps the status its state gives it.
    const refused = r.errorOut?.error === "UnknownInterruptError";
    let threadStatus: ThreadStatus = (r.status === "error" || r.status === "timeout") && !refused ? "error" : "idle";
    let values: unknown = null;
    let interrupts: Record<string, unknown[]> = {};
    // deno-lint-ignore no-explicit-any
    const graph = r.graph as any;
    if (r.final) {
      values = toWire(r.final.values ?? {});
      output = values;
    } else if (graph) {
      // A state the graph cannot read back (a node wrote a value its reducer refuses) still
      // ends the run: the thread keeps the values it had.
      const snapshot = await graph.getState(r.threadConfig).catch(async (err: unknown) => {
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
        output = all.length ? { ...(values as object), __interrupt__: all } : values;
      }
    }
    const end = { status: r.status, values, interrupts, threadStatus, error: r.errorOut };
    finalValues = output !== null && !r.errorOut ? output : values;
    if (r.rollback) {
      await broker.takeUnflushed(run.run_id);
      await storage.transaction(async (tx) => {
        const inflight = (await storage.runs.inflight(run.thread_id, tx)).filter((x) => x.run_id !== run.run_id);
        others = inflight.length > 0;
        await storage.threads.saveState(run.thread_id, { ...end, status: others ? "busy" : threadStatus }, tx);
        await storage.runs.delete(run.run_id, tx);
      });
    } else {
      // One statement: the run's checkpoints not yet written, its last events, the thread's
      // state and the run's status (so its checkpoints are durable with its end).
      const done = await storage.checkpointer.flushWith(async (checkpoints) => {
        events = await broker.takeUnflushed(run.run_id);
        return storage.runs.complete(run, end, events, checkpoints);
      });
      events = [];
      if (done.lost) {
        log.warn(
          `run ${run.run_id}: another replica took it over before its end was recorded here; it records the end`,
        );
        await broker.handOver(run.run_id);
        return;
      }
      others = done.busy;
    }
  } catch (err) {
    log.error(`run ${run.run_id}: cannot record the end of the run`, err);
    // The run and its thread still end (never a thread `busy` with no run in flight): if even
    // this fails, the next start frees the thread (WorkerPool.start).
    const failure = r.errorOut ??
      {
        error: "RunNotRecorded",
        message: "The run ended, but the server could not record its result (see the server log); start the run again.",
      };
    status = "error";
    output = { __error__: failure };
    await storage.events.append(run.run_id, events).catch(() => {});
    await storage.runs.setStatus(run.run_id, "error", { fromStatuses: ["running"] }).catch(() => {});
    others = await storage.threads.endFailedRun(run.thread_id, failure).catch((e2: unknown) => {
      log.error(`run ${run.run_id}: cannot free its thread ${run.thread_id} (freed at the next start)`, e2);
      return false;
    });
  }
  broker.finish(run.run_id, { status, output });
  const webhook = (run.kwargs as RunKwargs).webhook;
  if (webhook && deps.webhooks) {
    const record = (await storage.runs.get(run.run_id).catch(() => null)) ?? { ...run, status };
    deps.webhooks.deliver(run.run_id, webhook, {
      ...record,
      values: finalValues,
      error: r.errorOut ? `${r.errorOut.error}: ${r.errorOut.message}` : null,
    });
  }
  // Runs of this thread waiting behind this one can start now (here or on another replica).
  if (others) broker.wake({ broadcast: true });
  if ((run.kwargs as RunKwargs).temporary && (run.kwargs as RunKwargs).on_completion !== "keep") {
    await storage.threads.delete(run.thread_id).catch(() => {});
    await storage.checkpointer.deleteThread(run.thread_id).catch(() => {});
    await deps.onThreadDeleted?.(run.thread_id).catch((err) =>
      log.warn(
        `thread "${run.thread_id}" was deleted after its run, but not everything of it: ${(err as Error).message}`,
      )
    );
  }
}
