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
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  maxChannelVersion,
  type PendingWrite,
  TASKS,
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlExecutor } from "./sql.ts";

/** One row of a read: a checkpoint (kind 0), a channel value (1) or a pending write (2). */
interface ReadRow {
  kind: number;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  /** parent checkpoint id (0), channel (1), task id (2) */
  a: string | null;
  /** channel version (1), channel (2) */
  b: string | null;
  /** 1 only: the version whose value this one appends to */
  base: string | null;
  idx: number | null;
  task_path: string | null;
  type: string | null;
  data: Uint8Array | null;
  meta: Uint8Array | null;
  /** 0 only: the channel versions (null: the row holds its whole checkpoint, written before checkpoint_blobs) */
  versions: ChannelVersions | null;
}

interface Where {
  clauses: string[];
  params: unknown[];
}

const decoder = new TextDecoder();
/**
 * How late a put is written at most (reads, `flush()` and a run's end write it sooner). One
 * statement carries every run's puts of that time, so this bounds the statements a server
 * spends on checkpoints mid-run (a run's end writes its own with its status). What is at
 * stake is what a crash loses: a run taken over by another replica resumes from its last
 * written checkpoint (at most this much of its work is done again); a replica reading a thread another one runs
 * sees its state this late at most. As the stream's log (../engine/broker/broker.ts).
 */
const FLUSH_MS = 250;
/** Appended versions on top of a whole one before a list is stored whole again (bounds a read). */
const MAX_CHAIN = 100;
/** Threads remembered as having no checkpoint; the oldest go first (they are read again). */
const MAX_EMPTY = 10_000;
/** Lists remembered per (thread, namespace, channel), for appends; the oldest go first. */
const MAX_REMEMBERED = 256;

/** The last stored or read value of a list channel: what the next version may append to. */
interface Remembered {
  version: string;
  /** A copy of the list (its items are the graph's own objects). */
  items: unknown[];
  /** Appended versions between this one and a whole one. */
  depth: number;
}

/** `BaseCheckpointSaver` over the `checkpoints`, `checkpoint_blobs` and `checkpoint_writes` tables. */
export class SqlCheckpointSaver extends BaseCheckpointSaver {
  readonly #sql: SqlExecutor;
  // Write-behind: checkpoints, channel values and writes are batched into one statement,
  // written at most FLUSH_MS later, before any read, and by `flush()` (the server calls it
  // before it records a run's end, so a finished run's checkpoints are durable with its status).
  #checkpoints = new Map<string, unknown[]>();
  #blobs = new Map<string, unknown[]>();
  #writes = new Map<string, { params: unknown[]; special: boolean }>();
  #lists = new Map<string, Remembered>();
  /** Threads known to have no checkpoint (see `markEmpty`), oldest first. */
  readonly #empty = new Set<string>();
  /** Runs whose thread had no checkpoint when they were claimed, by run id: the thread (see `expectEmpty`). */
  readonly #emptyForRun = new Map<string, string>();
  #flushing: Promise<void> | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;

  readonly #encryption: AtRestEncryption | null;

  /** With `encryption`, checkpoints, channel values and writes are stored encrypted (type `<type>+aes`). */
  constructor(sql: SqlExecutor, opts: { encryption?: AtRestEncryption | null } = {}) {
    super();
    this.#sql = sql;
    this.#encryption = opts.encryption ?? null;
  }

  /** Serializes a value, encrypted when a key is configured. */
  async #dump(value: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return this.#encryption ? [`${type}+aes`, this.#encryption.seal(bytes)] : [type, bytes];
  }

  /** Deserializes a stored value, decrypting an encrypted one (values written without a key stay readable). */
  async #load(type: string, data: Uint8Array | string): Promise<any> {
    if (!type.endsWith("+aes")) return this.serde.loadsTyped(type, toBytes(data));
    if (!this.#encryption) {
      throw new Error("Cannot read a checkpoint: it is encrypted and LANGGRAPH_AES_KEY is not set");
    }
    return this.serde.loadsTyped(type.slice(0, -4), this.#encryption.open(toBytes(data)));
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

  #remember(key: string, entry: Remembered): void {
    this.#lists.delete(key);
    this.#lists.set(key, entry);
    if (this.#lists.size > MAX_REMEMBERED) this.#lists.delete(this.#lists.keys().next().value!);
  }

  #forget(threadId: string): void {
    const prefix = JSON.stringify([threadId]).slice(0, -1) + ",";
    for (const key of [...this.#lists.keys()]) if (key.startsWith(prefix)) this.#lists.delete(key);
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.flush().catch(() => {/* kept: retried by the next flush, which reports it */});
    }, FLUSH_MS);
    (this.#timer as { unref?: () => void }).unref?.();
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
  async flushWith<T>(write: (batch: ((params: unknown[]) => string[]) | null) => Promise<T>): Promise<T> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    while (this.#flushing) await this.#flushing;
    if (this.#checkpoints.size === 0 && this.#writes.size === 0 && this.#blobs.size === 0) return write(null);
    const checkpoints = this.#checkpoints;
    const blobs = this.#blobs;
    const writes = this.#writes;
    this.#checkpoints = new Map();
    this.#blobs = new Map();
    this.#writes = new Map();
    // Put back what was not written (newer puts of the same keys win), for the next flush.
    const restore = () => {
      for (const [k, v] of checkpoints) if (!this.#checkpoints.has(k)) this.#checkpoints.set(k, v);
      for (const [k, v] of blobs) if (!this.#blobs.has(k)) this.#blobs.set(k, v);
      for (const [k, v] of writes) if (!this.#writes.has(k)) this.#writes.set(k, v);
    };
    let built = false;
    const build = (params: unknown[]): string[] => {
      built = true;
      const rows = (list: unknown[][], casts: string[] = []) =>
        list.map((row) => `(${row.map((v, i) => `$${params.push(v)}${casts[i] ?? ""}`).join(", ")})`).join(", ");
      const parts: string[] = [];
      if (checkpoints.size) {
        parts.push(
          `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, metadata_json, channel_versions)
         VALUES ${rows([...checkpoints.values()], ["", "", "", "", "", "", "", "::jsonb", "::jsonb"])}
         ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type,
           checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata, metadata_json = EXCLUDED.metadata_json, channel_versions = EXCLUDED.channel_versions`,
        );
      }
      // A (channel, version) holds one value for good: a second put of it changes nothing.
      if (blobs.size) {
        parts.push(
          `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob, base) VALUES ${
            rows([...blobs.values()])
          }
         ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING`,
        );
      }
      const special = [...writes.values()].filter((w) => w.special).map((w) => w.params);
      const regular = [...writes.values()].filter((w) => !w.special).map((w) => w.params);
      const writesInsert =
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path) VALUES";
      const key = "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)";
      // Special channels (errors, interrupts) replace; regular writes keep the first copy.
      if (special.length) {
        parts.push(
          `${writesInsert} ${
            rows(special)
          } ON CONFLICT ${key} DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, value = EXCLUDED.value, task_path = EXCLUDED.task_path`,
        );
      }
      if (regular.length) parts.push(`${writesInsert} ${rows(regular)} ON CONFLICT ${key} DO NOTHING`);
      return parts;
    };
    const done = write(build);
    // Reads and other flushes wait for this one (never rejects: the error is the caller's).
    const barrier = done.then(() => {
      if (!built) restore();
    }, () => restore());
    this.#flushing = barrier;
    try {
      return await done;
    } finally {
      await barrier;
      if (this.#flushing === barrier) this.#flushing = null;
    }
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

  #openMetadata(metadata: CheckpointMetadata): CheckpointMetadata {
    return this.#encryption && metadata
      ? this.#encryption.openKeys(metadata as Record<string, unknown>) as CheckpointMetadata
      : metadata;
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
    if (filter && Object.keys(filter).length) add(where, "metadata_json @> ?::jsonb", JSON.stringify(filter));
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
    const [[type, bytes], [, metaBytes], blobs] = await Promise.all([
      this.#dump(stored),
      this.serde.dumpsTyped(
        this.#encryption ? this.#encryption.sealKeys(metadata as Record<string, unknown>) : metadata,
      ),
      Promise.all(
        Object.entries(changed).map(([channel, version]) =>
          this.#blobRow(threadId, ns, channel, String(version), values, channel in values)
        ),
      ),
    ]);
    // The first put of a (channel, version) wins, as in the table.
    for (const blob of blobs) {
      const key = JSON.stringify(blob.slice(0, 4));
      if (!this.#blobs.has(key)) this.#blobs.set(key, blob);
    }
    this.#checkpoints.set(
      JSON.stringify([threadId, ns, checkpoint.id]),
      [threadId, ns, checkpoint.id, parent, type, bytes, metaBytes, metadataJson(metaBytes), JSON.stringify(versions)],
    );
    this.#schedule();
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  /**
   * The `checkpoint_blobs` row of one channel version: "empty" without a value; the items
   * appended, when the value is a list that extends the one last stored or read for this
   * channel (the same item objects, in order: reducers append new objects and never change
   * a stored one in place); else the whole value.
   */
  async #blobRow(
    threadId: string,
    ns: string,
    channel: string,
    version: string,
    values: Record<string, unknown>,
    has: boolean,
  ): Promise<unknown[]> {
    if (!has) return [threadId, ns, channel, version, "empty", null, null];
    const value = values[channel];
    if (Array.isArray(value)) {
      const key = JSON.stringify([threadId, ns, channel]);
      const prev = this.#lists.get(key);
      const appended = prev && prev.version !== version && prev.depth < MAX_CHAIN &&
        value.length >= prev.items.length &&
        prev.items.every((item, i) => value[i] === item);
      this.#remember(key, { version, items: value.slice(), depth: appended ? prev.depth + 1 : 0 });
      if (appended) {
        const [t, b] = await this.#dump(value.slice(prev.items.length));
        return [threadId, ns, channel, version, t, b, prev.version];
      }
    }
    const [t, b] = await this.#dump(value);
    return [threadId, ns, channel, version, t, b, null];
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
      const [type, bytes] = await this.#dump(value);
      const idx = (WRITES_IDX_MAP as Record<string, number>)[channel] ?? i;
      const key = JSON.stringify([threadId, ns, checkpointId, taskId, idx]);
      // Special channels (errors, interrupts) replace; regular writes keep the first copy.
      if (special || !this.#writes.has(key)) {
        this.#writes.set(key, {
          params: [threadId, ns, checkpointId, taskId, idx, channel, type, bytes, taskPath ?? ""],
          special,
        });
      }
    }
    this.#schedule();
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.flush();
    this.#forget(threadId);
    await this.#sql.query(
      `WITH a AS (DELETE FROM checkpoints WHERE thread_id = $1), b AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1)
       DELETE FROM checkpoint_writes WHERE thread_id = $1`,
      [threadId],
    );
  }

  /**
   * Keeps only the latest checkpoint of each namespace of a thread, with its writes and the
   * channel values it needs (prune strategy "keep_latest": the thread and its current state
   * stay, the history goes).
   */
  async keepLatest(threadId: string): Promise<void> {
    await this.flush();
    this.#forget(threadId);
    const latest =
      "(SELECT max(l.checkpoint_id) FROM checkpoints l WHERE l.thread_id = $1 AND l.checkpoint_ns = x.checkpoint_ns)";
    await this.#sql.query(
      `DELETE FROM checkpoint_writes x WHERE x.thread_id = $1 AND x.checkpoint_id IS DISTINCT FROM ${latest}`,
      [threadId],
    );
    await this.#sql.query(`DELETE FROM checkpoints x WHERE x.thread_id = $1 AND x.checkpoint_id <> ${latest}`, [
      threadId,
    ]);
    await this.#dropUnreferencedValues(threadId);
  }

  /** Copies every checkpoint, channel value and write of one thread to another (thread copy). */
  async copyThread(fromThreadId: string, toThreadId: string): Promise<void> {
    this.#empty.delete(toThreadId);
    await this.flush();
    await this.#sql.query(
      `WITH a AS (
         INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, metadata_json, channel_versions, created_at)
         SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata,
           jsonb_set(metadata_json, '{thread_id}', to_jsonb($2::text)), channel_versions, created_at FROM checkpoints WHERE thread_id = $1
       ), b AS (
         INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob, base)
         SELECT $2, checkpoint_ns, channel, version, type, blob, base FROM checkpoint_blobs WHERE thread_id = $1
       )
       INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
       SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path FROM checkpoint_writes WHERE thread_id = $1`,
      [fromThreadId, toThreadId],
    );
  }

  /**
   * Deletes every checkpoint (all namespaces) of a thread written since `since`, with their
   * writes and the channel values no remaining checkpoint refers to: what one run wrote,
   * since a thread runs one run at a time (multitask "rollback").
   */
  async deleteSince(threadId: string, since: string): Promise<void> {
    await this.flush();
    this.#forget(threadId);
    await this.#sql.query(
      `WITH gone AS (
         DELETE FROM checkpoints WHERE thread_id = $1 AND created_at >= $2::timestamptz RETURNING checkpoint_ns, checkpoint_id
       )
       DELETE FROM checkpoint_writes w USING gone
       WHERE w.thread_id = $1 AND w.checkpoint_ns = gone.checkpoint_ns AND w.checkpoint_id = gone.checkpoint_id`,
      [threadId, since],
    );
    await this.#dropUnreferencedValues(threadId);
  }

  /** Deletes a thread's channel values that no checkpoint names, and no value that stays appends to. */
  async #dropUnreferencedValues(threadId: string): Promise<void> {
    // Values stay while a checkpoint names them or a value that stays appends to them.
    await this.#sql.query(
      `WITH RECURSIVE live (checkpoint_ns, channel, version) AS (
         SELECT c.checkpoint_ns, v.key, v.value FROM checkpoints c, jsonb_each_text(c.channel_versions) v WHERE c.thread_id = $1
         UNION
         SELECT bl.checkpoint_ns, bl.channel, bl.base FROM checkpoint_blobs bl JOIN live USING (checkpoint_ns, channel, version)
         WHERE bl.thread_id = $1 AND bl.base IS NOT NULL
       )
       DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1
         AND NOT EXISTS (SELECT 1 FROM live WHERE live.checkpoint_ns = b.checkpoint_ns AND live.channel = b.channel AND live.version = b.version)`,
      [threadId],
    );
  }

  /**
   * Reads the checkpoints matching `where` (newest first, at most `limit`) in one query: each
   * checkpoint row, the channel values its versions name (once each, however many
   * checkpoints share them), and its pending writes.
   */
  async #read(where: Where, limit: number | null): Promise<CheckpointTuple[]> {
    if (limit === 0) return [];
    const filter = where.clauses.length ? `WHERE ${where.clauses.join(" AND ")}` : "";
    const { rows } = await this.#sql.query<ReadRow>(
      `WITH RECURSIVE c AS (
         SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, channel_versions
         FROM checkpoints ${filter} ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC${
        limit === null ? "" : ` LIMIT ${limit}`
      }
       ), k (thread_id, checkpoint_ns, channel, version) AS (
         SELECT c.thread_id, c.checkpoint_ns, v.key, v.value FROM c, jsonb_each_text(c.channel_versions) v
         UNION
         SELECT bl.thread_id, bl.checkpoint_ns, bl.channel, bl.base FROM checkpoint_blobs bl JOIN k USING (thread_id, checkpoint_ns, channel, version)
         WHERE bl.base IS NOT NULL
       )
       SELECT 0 AS kind, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id AS a, NULL::text AS b, NULL::text AS base,
         NULL::integer AS idx, NULL::text AS task_path, type, checkpoint AS data, metadata AS meta, channel_versions AS versions FROM c
       UNION ALL
       SELECT 1, bl.thread_id, bl.checkpoint_ns, NULL, bl.channel, bl.version, bl.base, NULL, NULL, bl.type, bl.blob, NULL, NULL
         FROM checkpoint_blobs bl JOIN k USING (thread_id, checkpoint_ns, channel, version)
       UNION ALL
       SELECT 2, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.channel, NULL, w.idx, w.task_path, w.type, w.value, NULL, NULL
         FROM checkpoint_writes w JOIN c USING (thread_id, checkpoint_ns, checkpoint_id)`,
      where.params,
    );
    const checkpoints: ReadRow[] = [];
    const blobs = new Map<string, ReadRow>();
    const writes = new Map<string, ReadRow[]>();
    for (const r of rows) {
      const kind = Number(r.kind);
      if (kind === 0) checkpoints.push(r);
      else if (kind === 1) blobs.set(JSON.stringify([r.thread_id, r.checkpoint_ns, r.a, r.b]), r);
      else {
        const key = JSON.stringify([r.thread_id, r.checkpoint_ns, r.checkpoint_id]);
        const list = writes.get(key);
        if (list) list.push(r);
        else writes.set(key, [r]);
      }
    }
    // The order of the checkpoint query (the union drops it).
    checkpoints.sort((x, y) =>
      cmp(y.checkpoint_id!, x.checkpoint_id!) || cmp(y.thread_id, x.thread_id) || cmp(y.checkpoint_ns, x.checkpoint_ns)
    );
    // Each stored version is decoded once; an appended one is its base's value plus its items.
    const values = new Map<string, Promise<{ value: unknown; depth: number } | undefined>>();
    const value = (key: string, seen = 0): Promise<{ value: unknown; depth: number } | undefined> => {
      let v = values.get(key);
      if (!v) {
        const r = blobs.get(key);
        values.set(
          key,
          v = (async () => {
            if (!r || r.type === "empty" || seen > MAX_CHAIN * 2) return undefined;
            const own = await this.#load(r.type!, r.data!);
            if (r.base === null) return { value: own, depth: 0 };
            const base = await value(JSON.stringify([r.thread_id, r.checkpoint_ns, r.a, r.base]), seen + 1);
            if (!base || !Array.isArray(base.value) || !Array.isArray(own)) return undefined;
            return { value: base.value.concat(own), depth: base.depth + 1 };
          })(),
        );
      }
      return v;
    };
    const tuples = await Promise.all(checkpoints.map(async (row) => {
      const checkpoint = await this.#load(row.type!, row.data!) as Checkpoint;
      if (row.versions) {
        checkpoint.channel_versions = typeof row.versions === "string" ? JSON.parse(row.versions) : row.versions;
        const channelValues: Record<string, unknown> = {};
        for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
          const v = await value(JSON.stringify([row.thread_id, row.checkpoint_ns, channel, String(version)]));
          if (!v) continue;
          channelValues[channel] = v.value;
          // What a run goes on from: its next version of this list may append to it.
          if (checkpoints.length === 1 && Array.isArray(v.value)) {
            this.#remember(JSON.stringify([row.thread_id, row.checkpoint_ns, channel]), {
              version: String(version),
              items: v.value.slice(),
              depth: v.depth,
            });
          }
        }
        checkpoint.channel_values = channelValues;
      }
      const own = (writes.get(JSON.stringify([row.thread_id, row.checkpoint_ns, row.checkpoint_id])) ?? [])
        .sort((x, y) =>
          compareWritesSortKeys([x.task_path ?? "", x.a!, Number(x.idx)], [y.task_path ?? "", y.a!, Number(y.idx)])
        );
      const pendingWrites = await Promise.all(
        own.map(async (w) => [w.a!, w.b!, await this.#load(w.type!, w.data!)] as CheckpointPendingWrite),
      );
      const tuple: CheckpointTuple = {
        config: {
          configurable: {
            thread_id: row.thread_id,
            checkpoint_ns: row.checkpoint_ns,
            checkpoint_id: row.checkpoint_id,
          },
        },
        checkpoint,
        metadata: this.#openMetadata(await this.serde.loadsTyped("json", toBytes(row.meta!))),
        pendingWrites,
      };
      if (row.a) {
        tuple.parentConfig = {
          configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.a },
        };
      }
      return tuple;
    }));
    await this.#migratePendingSends(tuples);
    return tuples;
  }

  /**
   * Checkpoints before format 4 kept pending sends as writes to TASKS on their parent; they
   * become the TASKS channel's value (one more query, only when such checkpoints are read).
   */
  async #migratePendingSends(tuples: CheckpointTuple[]): Promise<void> {
    const old = tuples.filter((t) => t.checkpoint.v < 4 && t.parentConfig);
    if (old.length === 0) return;
    const keys = old.map((t) => t.parentConfig!.configurable!);
    const { rows } = await this.#sql.query<ReadRow>(
      `SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id AS a, w.idx, w.task_path, w.type, w.value AS data
       FROM checkpoint_writes w JOIN unnest($1::text[], $2::text[], $3::text[]) AS k (thread_id, checkpoint_ns, checkpoint_id)
         USING (thread_id, checkpoint_ns, checkpoint_id)
       WHERE w.channel = $4`,
      [keys.map((k) => k.thread_id), keys.map((k) => k.checkpoint_ns ?? ""), keys.map((k) => k.checkpoint_id), TASKS],
    );
    rows.sort((x, y) =>
      compareWritesSortKeys([x.task_path ?? "", x.a!, Number(x.idx)], [y.task_path ?? "", y.a!, Number(y.idx)])
    );
    for (const t of old) {
      const p = t.parentConfig!.configurable!;
      const sends = await Promise.all(
        rows.filter((r) =>
          r.thread_id === p.thread_id && r.checkpoint_ns === (p.checkpoint_ns ?? "") &&
          r.checkpoint_id === p.checkpoint_id
        )
          .map((r) => this.#load(r.type!, r.data!)),
      );
      const versions = Object.values(t.checkpoint.channel_versions);
      t.checkpoint.channel_values[TASKS] = sends;
      t.checkpoint.channel_versions[TASKS] = versions.length > 0
        ? maxChannelVersion(...versions)
        : this.getNextVersion(undefined);
    }
  }
}

function add(where: Where, clause: string, value: unknown): void {
  where.params.push(value);
  where.clauses.push(clause.replace("?", `$${where.params.length}`));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function toBytes(v: Uint8Array | string): Uint8Array {
  return typeof v === "string" ? new TextEncoder().encode(v) : new Uint8Array(v);
}

/** The metadata as JSON text for the `metadata_json` column (filters), or `{}` when it is not JSON. */
function metadataJson(bytes: Uint8Array): string {
  const text = decoder.decode(bytes);
  try {
    JSON.parse(text);
    return text.replace(/\\u0000/g, "");
  } catch {
    return "{}";
  }
}
