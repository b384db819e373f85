/**
 * A LangGraph checkpointer over our SQL (PGlite or PostgreSQL): checkpoints and pending
 * writes survive restarts, so threads resume where they stopped.
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
  type PendingWrite,
  WRITES_IDX_MAP,
  copyCheckpoint,
} from "@langchain/langgraph-checkpoint";
import type { SqlExecutor } from "./sql.ts";

interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Uint8Array;
  metadata: Uint8Array;
}

interface WriteRow {
  task_id: string;
  channel: string;
  type: string;
  value: Uint8Array;
}

const decoder = new TextDecoder();
const FLUSH_MS = 25;

/** `BaseCheckpointSaver` over the `checkpoints` and `checkpoint_writes` tables. */
export class SqlCheckpointSaver extends BaseCheckpointSaver {
  readonly #sql: SqlExecutor;
  // Write-behind: checkpoints and writes are batched into one statement, written at most
  // FLUSH_MS later, before any read, and by `flush()` (the server calls it before it records
  // a run's end, so a finished run's checkpoints are durable with its status).
  #checkpoints = new Map<string, unknown[]>();
  #writes = new Map<string, { params: unknown[]; special: boolean }>();
  #flushing: Promise<void> | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(sql: SqlExecutor) {
    super();
    this.#sql = sql;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.flush().catch(() => { /* kept: retried by the next flush, which reports it */ });
    }, FLUSH_MS);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Writes every checkpoint and write put so far. */
  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    while (this.#flushing) await this.#flushing.catch(() => {});
    if (this.#checkpoints.size === 0 && this.#writes.size === 0) return;
    const checkpoints = this.#checkpoints;
    const writes = this.#writes;
    this.#checkpoints = new Map();
    this.#writes = new Map();
    const params: unknown[] = [];
    const rows = (list: unknown[][], casts: string[] = []) =>
      list.map((row) => `(${row.map((v, i) => `$${params.push(v)}${casts[i] ?? ""}`).join(", ")})`).join(", ");
    const parts: string[] = [];
    if (checkpoints.size) {
      parts.push(`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, metadata_json)
       VALUES ${rows([...checkpoints.values()], ["", "", "", "", "", "", "", "::jsonb"])}
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET type = EXCLUDED.type, checkpoint = EXCLUDED.checkpoint,
         metadata = EXCLUDED.metadata, metadata_json = EXCLUDED.metadata_json`);
    }
    const special = [...writes.values()].filter((w) => w.special).map((w) => w.params);
    const regular = [...writes.values()].filter((w) => !w.special).map((w) => w.params);
    const writesInsert = "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path) VALUES";
    const key = "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)";
    // Special channels (errors, interrupts) replace; regular writes keep the first copy.
    if (special.length) parts.push(`${writesInsert} ${rows(special)} ON CONFLICT ${key} DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, value = EXCLUDED.value, task_path = EXCLUDED.task_path`);
    if (regular.length) parts.push(`${writesInsert} ${rows(regular)} ON CONFLICT ${key} DO NOTHING`);
    const text = parts.length === 1 ? parts[0]! : `WITH ${parts.map((p, i) => `w${i} AS (${p})`).join(", ")} SELECT 1`;
    const done = this.#sql.query(text, params).then(() => {}, (err) => {
      // Put back what failed (newer puts of the same keys win), for the next flush.
      for (const [k, v] of checkpoints) if (!this.#checkpoints.has(k)) this.#checkpoints.set(k, v);
      for (const [k, v] of writes) if (!this.#writes.has(k)) this.#writes.set(k, v);
      throw err;
    });
    this.#flushing = done;
    try {
      await done;
    } finally {
      if (this.#flushing === done) this.#flushing = null;
    }
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.flush();
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const id = config.configurable?.checkpoint_id as string | undefined;
    const { rows } = id
      ? await this.#sql.query<CheckpointRow>(
        "SELECT * FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
        [threadId, ns, id],
      )
      : await this.#sql.query<CheckpointRow>(
        "SELECT * FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1",
        [threadId, ns],
      );
    const row = rows[0];
    return row ? this.#toTuple(row) : undefined;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    await this.flush();
    const { before, limit, filter } = options ?? {};
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where.push(clause.replace("?", `$${params.length}`));
    };
    const c = config.configurable ?? {};
    if (c.thread_id !== undefined) add("thread_id = ?", c.thread_id);
    if (c.checkpoint_ns !== undefined) add("checkpoint_ns = ?", c.checkpoint_ns);
    if (c.checkpoint_id) add("checkpoint_id = ?", c.checkpoint_id);
    if (before?.configurable?.checkpoint_id) add("checkpoint_id < ?", before.configurable.checkpoint_id);
    if (filter && Object.keys(filter).length) add("metadata_json @> ?::jsonb", JSON.stringify(filter));
    let text = `SELECT * FROM checkpoints${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY checkpoint_id DESC`;
    if (limit !== undefined) text += ` LIMIT ${Math.max(0, Math.floor(limit))}`;
    const { rows } = await this.#sql.query<CheckpointRow>(text, params);
    for (const row of rows) yield await this.#toTuple(row);
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, _newVersions?: ChannelVersions): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) throw new Error('Cannot save a checkpoint: the config has no "thread_id"');
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parent = (config.configurable?.checkpoint_id as string | undefined) ?? null;
    const [[type, bytes], [metaType, metaBytes]] = await Promise.all([
      this.serde.dumpsTyped(copyCheckpoint(checkpoint)),
      this.serde.dumpsTyped(metadata),
    ]);
    const metaJson = metaType === "json" ? decoder.decode(metaBytes) : "{}";
    this.#checkpoints.set(JSON.stringify([threadId, ns, checkpoint.id]), [threadId, ns, checkpoint.id, parent, type, bytes, metaBytes, safeJson(metaJson)]);
    this.#schedule();
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (threadId === undefined || checkpointId === undefined) throw new Error('Cannot save writes: the config has no "thread_id" or "checkpoint_id"');
    if (writes.length === 0) return;
    const special = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    for (const [i, [channel, value]] of writes.entries()) {
      const [type, bytes] = await this.serde.dumpsTyped(value);
      const idx = (WRITES_IDX_MAP as Record<string, number>)[channel] ?? i;
      const key = JSON.stringify([threadId, ns, checkpointId, taskId, idx]);
      // Special channels (errors, interrupts) replace; regular writes keep the first copy.
      if (special || !this.#writes.has(key)) {
        this.#writes.set(key, { params: [threadId, ns, checkpointId, taskId, idx, channel, type, bytes, taskPath ?? ""], special });
      }
    }
    this.#schedule();
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.flush();
    await this.#sql.query("DELETE FROM checkpoints WHERE thread_id = $1", [threadId]);
    await this.#sql.query("DELETE FROM checkpoint_writes WHERE thread_id = $1", [threadId]);
  }

  /**
   * Keeps only the latest checkpoint of each namespace of a thread, with its writes (prune
   * strategy "keep_latest": the thread and its current state stay, the history goes).
   */
  async keepLatest(threadId: string): Promise<void> {
    await this.flush();
    const latest = "(SELECT max(l.checkpoint_id) FROM checkpoints l WHERE l.thread_id = $1 AND l.checkpoint_ns = x.checkpoint_ns)";
    await this.#sql.query(`DELETE FROM checkpoint_writes x WHERE x.thread_id = $1 AND x.checkpoint_id IS DISTINCT FROM ${latest}`, [threadId]);
    await this.#sql.query(`DELETE FROM checkpoints x WHERE x.thread_id = $1 AND x.checkpoint_id <> ${latest}`, [threadId]);
  }

  /** Copies every checkpoint and write of one thread to another (thread copy). */
  async copyThread(fromThreadId: string, toThreadId: string): Promise<void> {
    await this.flush();
    await this.#sql.query(
      `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, metadata_json, created_at)
       SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata,
         jsonb_set(metadata_json, '{thread_id}', to_jsonb($2::text)), created_at FROM checkpoints WHERE thread_id = $1`,
      [fromThreadId, toThreadId],
    );
    await this.#sql.query(
      `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
       SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path FROM checkpoint_writes WHERE thread_id = $1`,
      [fromThreadId, toThreadId],
    );
  }

  /**
   * Deletes every checkpoint (all namespaces) of a thread written since `since`, with their
   * writes: what one run wrote, since a thread runs one run at a time (multitask "rollback").
   */
  async deleteSince(threadId: string, since: string): Promise<void> {
    await this.flush();
    const { rows } = await this.#sql.query<{ checkpoint_ns: string; checkpoint_id: string }>(
      "DELETE FROM checkpoints WHERE thread_id = $1 AND created_at >= $2::timestamptz RETURNING checkpoint_ns, checkpoint_id",
      [threadId, since],
    );
    for (const r of rows) {
      await this.#sql.query("DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3", [threadId, r.checkpoint_ns, r.checkpoint_id]);
    }
  }

  async #toTuple(row: CheckpointRow): Promise<CheckpointTuple> {
    const { rows: writes } = await this.#sql.query<WriteRow>(
      `SELECT task_id, channel, type, value FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3
       ORDER BY task_path, task_id, idx`,
      [row.thread_id, row.checkpoint_ns, row.checkpoint_id],
    );
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      writes.map(async (w) => [w.task_id, w.channel, await this.serde.loadsTyped(w.type, toBytes(w.value))] as CheckpointPendingWrite),
    );
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id } },
      checkpoint: await this.serde.loadsTyped(row.type, toBytes(row.checkpoint)),
      metadata: await this.serde.loadsTyped("json", toBytes(row.metadata)),
      pendingWrites,
    };
    if (row.parent_checkpoint_id) {
      tuple.parentConfig = {
        configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.parent_checkpoint_id },
      };
    }
    return tuple;
  }
}

function toBytes(v: Uint8Array | string): Uint8Array {
  return typeof v === "string" ? new TextEncoder().encode(v) : new Uint8Array(v);
}

function safeJson(text: string): string {
  try {
    JSON.parse(text);
    return text.replace(/\\u0000/g, "");
  } catch {
    return "{}";
  }
}
