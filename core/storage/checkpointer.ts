/**
 * A LangGraph checkpointer over our SQL (PGlite or PostgreSQL): checkpoints and pending
 * writes survive restarts, so threads resume where they stopped. Storage is incremental, as
 * in LangGraph's PostgreSQL saver: a checkpoint row holds the checkpoint without its channel
 * values, and each channel's value is stored once per channel version (`checkpoint_blobs`),
 * so a step that changes one channel writes that channel only. A list that only grew since
 * its previous version (messages) is stored as the items appended, on top of that version,
 * so a conversation's storage grows with its length, not with its square.
 *
 * @example
 * const saver = new SqlCheckpointSaver(sql);
 * const graph = builder.compile({ checkpointer: saver });
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
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import { CheckpointCodec, metadataJson } from "./checkpointer/codec.ts";
import { blobRow, RememberedLists } from "./checkpointer/lists.ts";
import { add, readCheckpoints, type ReadContext, type Where } from "./checkpointer/read.ts";
import { copyThreadRows, deleteRowsSince, deleteThreadRows, keepLatestRows } from "./checkpointer/threads.ts";
import { type BatchBuilder, WriteBehind } from "./checkpointer/write-behind.ts";
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlExecutor } from "./sql.ts";
import { jsonbText } from "./jsonb.ts";

/** Threads remembered as having no checkpoint; the oldest go first (they are read again). */
const MAX_EMPTY = 10_000;

/** `BaseCheckpointSaver` over the `checkpoints`, `checkpoint_blobs` and `checkpoint_writes` tables. */
export class SqlCheckpointSaver extends BaseCheckpointSaver {
  readonly #sql: SqlExecutor;
  // Write-behind: checkpoints, channel values and writes are batched into one statement,
  // written at most FLUSH_MS (checkpointer/write-behind.ts) later, before any read, and by `flush()` (the server calls it
  // before it records a run's end, so a finished run's checkpoints are durable with its status).
  readonly #pending = new WriteBehind(() => this.flush());
  readonly #lists = new RememberedLists();
  readonly #codec: CheckpointCodec;
  /** Threads known to have no checkpoint (see `markEmpty`), oldest first. */
  readonly #empty = new Set<string>();
  /** Runs whose thread had no checkpoint when they were claimed, by run id: the thread (see `expectEmpty`). */
  readonly #emptyForRun = new Map<string, string>();

  /** With `encryption`, checkpoints, channel values and writes are stored encrypted (type `<type>+aes`). */
  constructor(sql: SqlExecutor, opts: { encryption?: AtRestEncryption | null } = {}) {
    super();
    this.#sql = sql;
    this.#codec = new CheckpointCodec(this.serde, opts.encryption ?? null);
  }

  /**
   * Numeric versions, as LangGraph's default, with a random fraction: a channel value is
   * stored once per (channel, version), so two branches of a thread (a fork from an earlier
   * checkpoint, a rolled-back run) must never give different values the same version.
   * Numbers keep them comparable with the integer versions of older checkpoints.
   */
  override getNextVersion(current: number | undefined): number {
    const base = typeof current === "number" ? Math.floor(current) : 0;
    return Number(`${base + 1}.${String(1 + Math.floor(Math.random() * 9_999_998)).padStart(7, "0")}`);
  }

  /** Writes every checkpoint and write put so far. */
  async flush(): Promise<void> {
    await this.flushWith(async (batch) => {
      if (!batch) return;
      const params: unknown[] = [];
      const parts = batch(params);
      const text = parts.length === 1
        ? parts[0]!
        : `WITH ${parts.map((p, i) => `w${i} AS (${p})`).join(", ")} SELECT 1`;
      await this.#sql.query(text, params);
    });
  }

  /**
   * Writes every checkpoint and write put so far within a statement of the caller's: `write`
   * gets a builder (null when nothing waits) that appends the batch's parameters to the
   * statement's and returns its data-modifying statements, to run as CTEs of it. When
   * `write` fails, the batch is kept for the next flush. The server writes a run's end this
   * way: its checkpoints, its last events and its status in one statement.
   */
  flushWith<T>(write: (batch: BatchBuilder | null) => Promise<T>): Promise<T> {
    return this.#pending.flushWith(write);
  }

  /**
   * Tells the saver that a thread has no checkpoint (one just created, on a database that
   * only this process writes and only through this saver): reads of it answer without a
   * query until anything is put for it. A new thread's first run then skips its read.
   */
  markEmpty(threadId: string): void {
    this.#empty.add(threadId);
    if (this.#empty.size > MAX_EMPTY) this.#empty.delete(this.#empty.values().next().value!);
  }

  /**
   * Tells the saver that the run `runId`, just claimed, found its thread with no checkpoint
   * (the statement that claimed it read so, on any database): the run's first read of the
   * thread's latest root checkpoint answers none without a query. Only that read: the run
   * holds its thread (one running run per thread, no state update while it runs), so nothing
   * else can have written one in between; later reads query as usual.
   */
  expectEmpty(runId: string, threadId: string): void {
    this.#emptyForRun.set(runId, threadId);
    if (this.#emptyForRun.size > MAX_EMPTY) this.#emptyForRun.delete(this.#emptyForRun.keys().next().value!);
  }

  /** Drops what `expectEmpty` said of a run (it ended before reading). */
  forgetRun(runId: string): void {
    this.#emptyForRun.delete(runId);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined || this.#empty.has(threadId)) return undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const id = config.configurable?.checkpoint_id as string | undefined;
    const runId = config.configurable?.run_id as string | undefined;
    if (runId !== undefined && ns === "" && !id && this.#emptyForRun.get(runId) === threadId) {
      this.#emptyForRun.delete(runId);
      return undefined;
    }
    await this.flush();
    const where: Where = { clauses: [], params: [] };
    add(where, "thread_id = ?", threadId);
    add(where, "checkpoint_ns = ?", ns);
    if (id) add(where, "checkpoint_id = ?", id);
    const [tuple] = await this.#read(where, 1);
    return tuple;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    await this.flush();
    const { before, limit, filter } = options ?? {};
    const where: Where = { clauses: [], params: [] };
    const c = config.configurable ?? {};
    if (c.thread_id !== undefined) add(where, "thread_id = ?", c.thread_id);
    if (c.checkpoint_ns !== undefined) add(where, "checkpoint_ns = ?", c.checkpoint_ns);
    if (c.checkpoint_id) add(where, "checkpoint_id = ?", c.checkpoint_id);
    if (before?.configurable?.checkpoint_id) add(where, "checkpoint_id < ?", before.configurable.checkpoint_id);
    if (filter && Object.keys(filter).length) add(where, "metadata_json @> ?::jsonb", jsonbText(filter));
    // One query, whatever the page size: values and writes come with the checkpoints.
    const tuples = await this.#read(where, limit === undefined ? null : Math.max(0, Math.floor(limit)));
    for (const t of tuples) yield t;
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions?: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId !== undefined) this.#empty.delete(threadId);
    if (threadId === undefined) throw new Error('Cannot save a checkpoint: the config has no "thread_id"');
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parent = (config.configurable?.checkpoint_id as string | undefined) ?? null;
    const values = checkpoint.channel_values ?? {};
    const versions = { ...checkpoint.channel_versions };
    // Only the channels whose version is new get their value stored (all, when the caller
    // does not say which are new); a channel that is new but has no value is stored "empty".
    const changed = newVersions ?? versions;
    // Values and versions have their own columns and rows.
    const stored: Checkpoint = {
      v: checkpoint.v,
      id: checkpoint.id,
      ts: checkpoint.ts,
      channel_values: {},
      channel_versions: {},
      versions_seen: checkpoint.versions_seen,
    };
    const [[type, bytes], metaBytes, blobs] = await Promise.all([
      this.#codec.dump(stored),
      this.#codec.dumpMetadata(metadata),
      Promise.all(
        Object.entries(changed).map(([channel, version]) =>
          blobRow(this.#codec, this.#lists, {
            threadId,
            ns,
            channel,
            version: String(version),
            values,
            has: channel in values,
          })
        ),
      ),
    ]);
    // The first put of a (channel, version) wins, as in the table.
    for (const blob of blobs) this.#pending.addBlob(JSON.stringify(blob.slice(0, 4)), blob);
    this.#pending.setCheckpoint(
      JSON.stringify([threadId, ns, checkpoint.id]),
      [threadId, ns, checkpoint.id, parent, type, bytes, metaBytes, metadataJson(metaBytes), JSON.stringify(versions)],
    );
    this.#pending.schedule();
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId !== undefined) this.#empty.delete(threadId);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (threadId === undefined || checkpointId === undefined) {
      throw new Error('Cannot save writes: the config has no "thread_id" or "checkpoint_id"');
    }
    if (writes.length === 0) return;
    const special = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    for (const [i, [channel, value]] of writes.entries()) {
      const [type, bytes] = await this.#codec.dump(value);
      const idx = (WRITES_IDX_MAP as Record<string, number>)[channel] ?? i;
      const key = JSON.stringify([threadId, ns, checkpointId, taskId, idx]);
      // Special channels (errors, interrupts) replace; regular writes keep the first copy.
      if (special || !this.#pending.hasWrite(key)) {
        this.#pending.setWrite(key, {
          params: [threadId, ns, checkpointId, taskId, idx, channel, type, bytes, taskPath ?? ""],
          special,
        });
      }
    }
    this.#pending.schedule();
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.flush();
    this.#lists.forget(threadId);
    await deleteThreadRows(this.#sql, threadId);
  }

  /**
   * Keeps only the latest checkpoint of each namespace of a thread, with its writes and the
   * channel values it needs (prune strategy "keep_latest": the thread and its current state
   * stay, the history goes).
   */
  async keepLatest(threadId: string): Promise<void> {
    await this.flush();
    this.#lists.forget(threadId);
    await keepLatestRows(this.#sql, threadId);
  }

  /** Copies every checkpoint, channel value and write of one thread to another (thread copy). */
  async copyThread(fromThreadId: string, toThreadId: string): Promise<void> {
    this.#empty.delete(toThreadId);
    await this.flush();
    await copyThreadRows(this.#sql, fromThreadId, toThreadId);
  }

  /**
   * Deletes every checkpoint (all namespaces) of a thread written since `since`, with their
   * writes and the channel values no remaining checkpoint refers to: what one run wrote,
   * since a thread runs one run at a time (multitask "rollback").
   */
  async deleteSince(threadId: string, since: string): Promise<void> {
    await this.flush();
    this.#lists.forget(threadId);
    await deleteRowsSince(this.#sql, threadId, since);
  }

  #read(where: Where, limit: number | null): Promise<CheckpointTuple[]> {
    const ctx: ReadContext = {
      sql: this.#sql,
      codec: this.#codec,
      lists: this.#lists,
      nextVersion: () => this.getNextVersion(undefined),
    };
    return readCheckpoints(ctx, where, limit);
  }
}
