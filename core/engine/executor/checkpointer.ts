/**
 * The checkpointer graphs get from the server: the storage's checkpointer, saving with each
 * checkpoint the run's metadata as LangGraph's server does (its checkpointer merges the run
 * config's `configurable` values and `metadata` into every checkpoint's metadata), so
 * `threads.getHistory({ metadata: { run_id } })` and other run metadata filters find them.
 * Storage keeps the plain checkpointer contract (what LangGraph's validation suite checks).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";

const CHECKPOINT_KEYS = new Set(["checkpoint_ns", "checkpoint_id", "checkpoint_map"]);

/**
 * A checkpoint's metadata with the run's: the run config's plain `configurable` values (ids
 * such as `run_id`, `assistant_id`, `graph_id`, user settings), then its `metadata`, then
 * the checkpoint's own. No internal (`__`) keys, no objects (such as the authenticated user).
 */
export function runMetadata(config: RunnableConfig, metadata: CheckpointMetadata): CheckpointMetadata {
  const fromConfigurable = Object.entries(config.configurable ?? {}).filter(([k, v]) =>
    !k.startsWith("__") && !CHECKPOINT_KEYS.has(k) &&
    (typeof v === "string" || typeof v === "number" || typeof v === "boolean")
  );
  return { ...Object.fromEntries(fromConfigurable), ...(config.metadata ?? {}), ...metadata } as CheckpointMetadata;
}

/** Wraps a checkpointer so each saved checkpoint carries its run's metadata. */
export class RunCheckpointer extends BaseCheckpointSaver {
  readonly inner: BaseCheckpointSaver;

  constructor(inner: BaseCheckpointSaver) {
    super(inner.serde);
    this.inner = inner;
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.inner.getTuple(config);
  }

  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return this.inner.list(config, options);
  }

  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.inner.put(config, checkpoint, runMetadata(config, metadata), newVersions);
  }

  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    return this.inner.putWrites(config, writes, taskId, taskPath);
  }

  deleteThread(threadId: string): Promise<void> {
    return this.inner.deleteThread(threadId);
  }

  override getDeltaChannelHistory(
    options: Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0],
  ): ReturnType<BaseCheckpointSaver["getDeltaChannelHistory"]> {
    return this.inner.getDeltaChannelHistory(options);
  }

  // deno-lint-ignore no-explicit-any
  override getNextVersion(current: any): any {
    return this.inner.getNextVersion(current);
  }
}
