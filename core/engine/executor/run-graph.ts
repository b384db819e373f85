/**
 * A run's graph, from its set-up to the end of its stream: loads the assistant's graph with
 * the run's config, says the run started (graph warmth, tracing), then streams the graph in
 * the requested modes, each chunk translated to the run's events.
 */
import { Command } from "@langchain/langgraph";
import { toolMetaOf } from "../tracing/stream-trace.ts";
import type { RunTrace } from "../tracing/tracing.ts";
import type { RunUsage } from "../usage/meter.ts";
import { subjectOfRun } from "../usage/subject.ts";
import type { CompiledGraph } from "./graphs.ts";
import { runConfig } from "./run-config.ts";
import { refuseUnmatchedResume } from "./run-errors.ts";
import { toWire } from "./serialize.ts";
import { ChunkTranslator, type Emit, libModes, type LibStreamMode, type StreamMode } from "./stream-modes.ts";
import type { ExecutableRun, ExecutorDeps, ResumeOptions, RunKwargs } from "./types.ts";

/** What the run got to, for its end (./run-end.ts) whether it streamed to its end or threw. */
export interface RunProgress {
  graph: CompiledGraph | null;
  /** Says the graph's run ended (../executor/graphs.ts's warmth count). */
  runEnded: () => void;
  trace: RunTrace | null;
  /** The run's usage metering (its signal aborts over a budget), when usage is recorded. */
  usage: RunUsage | null;
  /** The final state, as the stream showed it; null when it must be read back (see ./run-end.ts). */
  final: { values: unknown } | null;
  /** The stream showed an interrupt. */
  interrupted: boolean;
}

/** Runs the run's graph to the end of its stream (throws what the graph throws, or its abort). */
export async function runGraph(opts: {
  deps: ExecutorDeps;
  run: ExecutableRun;
  resume: ResumeOptions;
  signal: AbortSignal;
  emit: Emit;
  progress: RunProgress;
}): Promise<void> {
  const { deps, run, resume, progress } = opts;
  const { storage, graphs } = deps;
  const kwargs = run.kwargs as RunKwargs;
  const assistant = run.assistant ?? (await storage.assistants.get(run.assistant_id));
  if (!assistant) throw new Error(`assistant "${run.assistant_id}" no longer exists`);
  const modes: StreamMode[] = kwargs.stream_mode?.length ? kwargs.stream_mode : ["values"];
  // A resumed run whose first replica checkpointed goes on from its latest checkpoint (no
  // input, no checkpoint_id); one that checkpointed nothing starts again from its input.
  const fromCheckpoint = Boolean(resume.resumed) &&
    ((await storage.checkpointer.getTuple({ configurable: { thread_id: run.thread_id } }))?.metadata as
        | { run_id?: unknown }
        | undefined)?.run_id === run.run_id;
  const checkpointId = fromCheckpoint ? undefined : kwargs.checkpoint_id ?? kwargs.checkpoint?.checkpoint_id;
  const threadMetadata = run.threadMetadata ?? (await storage.threads.get(run.thread_id))?.metadata;
  const base = runConfig({ run, assistant, threadMetadata, checkpointId });
  const graph = progress.graph = await graphs.get(assistant.graph_id, base);
  progress.runEnded = graphs.runStarted(graph);
  progress.trace = deps.tracer?.startRun({
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    graph_id: assistant.graph_id,
    attempt: run.attempt,
  }) ?? null;
  progress.usage = deps.usage?.startRun({
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    subject: subjectOfRun(run),
  }) ?? null;
  // A cron's run was created without admission: it is admitted as it starts (over a limit, it ends with the error).
  if (deps.usage && kwargs.usage_subject === undefined && run.metadata?.cron_id && !resume.resumed) {
    const refused = await deps.usage.admitStart(subjectOfRun(run));
    if (refused) throw refused;
  }
  // Usage and the local trace are read from the stream unless the run has a callback handler
  // anyway (any handler costs LangChain's machinery on every runnable): then the trace
  // recorder's handler notes every call and feeds the usage handler (one handler for both).
  const handlerAnyway = Boolean(progress.trace?.callbacks.length) ||
    modes.some((m) => m === "messages" || m === "messages-tuple" || m === "events");
  const usageHandler = handlerAnyway ? progress.usage?.callbacks[0] ?? null : null;
  const traced = {
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    graph_id: assistant.graph_id,
    attempt: run.attempt,
  };
  const local = handlerAnyway ? deps.traces?.start(traced, usageHandler) ?? null : null;
  const tap = progress.usage && !handlerAnyway ? progress.usage : null;
  // Without a handler, the trace is built from the `tasks` stream, which feeds the usage too.
  const streamed = handlerAnyway
    ? null
    : deps.traces?.startStream(traced, { usage: tap, toolMeta: toolMetaOf(graph) }) ?? null;
  if (resume.fail) throw Object.assign(new Error(resume.fail.message), { name: resume.fail.error });
  // The root "values" stream ends with the thread's state when the graph streams all of its
  // state channels; then the state need not be read back after the run. A run that may stop
  // at a static interrupt ends with its state read back (its `next`).
  const streamsState = sameKeys(graph.outputChannels, graph.streamChannelsAsIs) && !kwargs.interrupt_before?.length &&
    !kwargs.interrupt_after?.length &&
    !graph.interruptBefore?.length && !graph.interruptAfter?.length;
  const callbacks = [
    ...(progress.trace?.callbacks ?? []),
    ...(local ? [local] : usageHandler ? [usageHandler] : []),
  ];
  const config = {
    ...base,
    ...(callbacks.length ? { callbacks } : {}),
    runId: run.run_id,
    signal: progress.usage ? AbortSignal.any([opts.signal, progress.usage.signal]) : opts.signal,
    streamMode: [
      ...new Set([
        ...libModes(modes),
        ...(streamsState ? ["values" as const] : []),
        ...(streamed ? ["tasks" as const, "values" as const] : tap ? ["updates" as const] : []),
      ]),
    ],
    subgraphs: Boolean(kwargs.stream_subgraphs) || Boolean(tap) || Boolean(streamed),
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
  await streamGraph({
    runId: run.run_id,
    graph,
    input,
    config,
    modes,
    streamsState,
    emit: opts.emit,
    progress,
    tap: streamed ??
      (tap ? { observe: (ns, _mode, payload) => _mode === "updates" && tap.observe(ns, payload) } : null),
    subgraphs: Boolean(kwargs.stream_subgraphs),
  });
}

/** Streams the graph, translating each chunk to the run's events; notes the final state and interrupts. */
async function streamGraph(opts: {
  runId: string;
  graph: CompiledGraph;
  input: unknown;
  config: Record<string, unknown>;
  modes: StreamMode[];
  streamsState: boolean;
  emit: Emit;
  progress: RunProgress;
  /**
   * What reads the run's own chunks (streamed with subgraphs for it): the stream-built trace
   * (`tasks`, root `values`; it feeds the usage), else the usage (`updates`).
   */
  tap: { observe(ns: readonly string[], mode: string, payload: unknown): unknown } | null;
  /** The client asked for subgraphs' chunks (else those streamed for the usage are not shown). */
  subgraphs: boolean;
}): Promise<void> {
  const { graph, input, config, modes, emit, progress, tap } = opts;
  const translator = new ChunkTranslator(modes);
  const onChunk = (chunk: unknown) => {
    const parts = chunk as unknown[];
    const [ns, mode, payload] = parts.length === 3 ? parts : [[], ...parts];
    if (tap) {
      tap.observe(ns as string[], mode as string, payload);
      if (!opts.subgraphs && (ns as string[]).length) return;
    }
    if (mode === "values" || mode === "updates") {
      if (payload && typeof payload === "object" && "__interrupt__" in payload) progress.interrupted = true;
      else if (mode === "values" && opts.streamsState && !(ns as string[])?.length) {
        progress.final = { values: payload };
      }
    }
    translator.translate({ ns: (ns as string[]) ?? [], mode: mode as LibStreamMode, payload, emit });
  };
  if (modes.includes("events")) {
    for await (const ev of graph.streamEvents(input, { ...config, version: "v2" })) {
      if (ev.event === "on_chain_stream" && (ev.parent_ids?.length ?? 0) === 0 && ev.run_id === opts.runId) {
        onChunk(ev.data.chunk);
      } else emit("events", toWire(ev));
    }
  } else {
    for await (const chunk of await graph.stream(input, config)) onChunk(chunk);
  }
  translator.complete(emit);
}

function sameKeys(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((k) => set.has(k));
}
