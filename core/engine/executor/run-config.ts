/**
 * A run's LangGraph config: the assistant's config and context under the run's own, the
 * thread's and the run's metadata, and the ids the checkpointer and the graph read.
 */
import type { Json } from "../../storage/index.ts";
import { isPlainObject } from "./run-errors.ts";
import type { ExecutableRun, RunKwargs } from "./types.ts";

/** What a run's config is made from. */
export interface RunConfigSources {
  run: ExecutableRun;
  assistant: { graph_id: string; config: unknown; context: unknown };
  /** The thread's metadata (it becomes the run's, under the run's own). */
  threadMetadata: Json | undefined;
  /** The checkpoint the run starts from (none: the thread's latest). */
  checkpointId: string | undefined;
}

/** The config a graph (or its factory) gets for a run, before the stream's own options. */
export function runConfig(src: RunConfigSources): Record<string, unknown> & { configurable: Record<string, unknown> } {
  const { run, assistant, checkpointId } = src;
  const kwargs = run.kwargs as RunKwargs;
  const aConfig = (assistant.config ?? {}) as RunKwargs["config"] & object;
  const rConfig = kwargs.config ?? {};
  const recursionLimit = rConfig.recursion_limit ?? aConfig.recursion_limit;
  const runName = rConfig.run_name ?? aConfig.run_name;
  const maxConcurrency = rConfig.max_concurrency ?? aConfig.max_concurrency;
  const { recursion_limit: _a, run_name: _an, max_concurrency: _am, ...aRest } = aConfig;
  const { recursion_limit: _r, run_name: _rn, max_concurrency: _rm, ...rRest } = rConfig;
  const durability = kwargs.durability ??
    (kwargs.checkpoint_during === undefined ? undefined : kwargs.checkpoint_during ? "async" : "exit");
  // As on LangGraph's server, the thread's and the run's metadata become the run's (and so
  // its checkpoints') metadata, beside the ids the checkpointer adds from `configurable`.
  const aContext = assistant.context;
  const rContext = kwargs.context;
  const context = isPlainObject(aContext) && isPlainObject(rContext)
    ? { ...aContext, ...rContext }
    : rContext ?? aContext ?? undefined;
  return {
    ...aRest,
    ...rRest,
    ...(recursionLimit !== undefined ? { recursionLimit } : {}),
    ...(runName !== undefined ? { runName } : {}),
    ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
    ...(durability !== undefined ? { durability } : {}),
    tags: [...(aConfig.tags ?? []), ...(rConfig.tags ?? [])],
    // `run_id` in the checkpoints' metadata tells a resumed run which checkpoints are its own.
    metadata: { ...(src.threadMetadata ?? {}), ...(run.metadata ?? {}), run_id: run.run_id, run_attempt: run.attempt },
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
}
