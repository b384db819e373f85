/**
 * The checkpointer's write-behind buffer: checkpoints, channel values and writes put since the
 * last flush, written together in one statement at most FLUSH_MS later, before any read, and
 * by a flush (the server flushes before it records a run's end, so a finished run's
 * checkpoints are durable with its status).
 */

/**
 * How late a put is written at most (reads, `flush()` and a run's end write it sooner). One
 * statement carries every run's puts of that time, so this bounds the statements a server
 * spends on checkpoints mid-run (a run's end writes its own with its status). What is at
 * stake is what a crash loses: a run taken over by another replica resumes from its last
 * written checkpoint (at most this much of its work is done again); a replica reading a thread another one runs
 * sees its state this late at most. As the stream's log (../../engine/broker/broker.ts).
 */
const FLUSH_MS = 250;

/** A pending write's row, and whether its channel is a special one (errors, interrupts). */
export interface PendingWriteRow {
  params: unknown[];
  special: boolean;
}

/** What waits to be written, by row key. */
interface Pending {
  checkpoints: Map<string, unknown[]>;
  blobs: Map<string, unknown[]>;
  writes: Map<string, PendingWriteRow>;
}

/** The builder a flush hands its writer: appends the batch's parameters, returns its statements. */
export type BatchBuilder = (params: unknown[]) => string[];

export class WriteBehind {
  #pending: Pending = empty();
  #flushing: Promise<void> | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  readonly #flush: () => Promise<void>;

  /** `flush` is what the timer runs (the saver's own flush). */
  constructor(flush: () => Promise<void>) {
    this.#flush = flush;
  }

  /** Puts a checkpoint row (a newer put of the same checkpoint replaces it). */
  setCheckpoint(key: string, row: unknown[]): void {
    this.#pending.checkpoints.set(key, row);
  }

  /** Puts a channel value row: the first put of a (channel, version) wins, as in the table. */
  addBlob(key: string, row: unknown[]): void {
    if (!this.#pending.blobs.has(key)) this.#pending.blobs.set(key, row);
  }

  hasWrite(key: string): boolean {
    return this.#pending.writes.has(key);
  }

  setWrite(key: string, write: PendingWriteRow): void {
    this.#pending.writes.set(key, write);
  }

  /** Writes what waits at most FLUSH_MS from now. */
  schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#flush().catch(() => {/* kept: retried by the next flush, which reports it */});
    }, FLUSH_MS);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /**
   * Writes every checkpoint and write put so far within a statement of the caller's: `write`
   * gets a builder (null when nothing waits) that appends the batch's parameters to the
   * statement's and returns its data-modifying statements, to run as CTEs of it. When
   * `write` fails, the batch is kept for the next flush.
   */
  async flushWith<T>(write: (batch: BatchBuilder | null) => Promise<T>): Promise<T> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    while (this.#flushing) await this.#flushing;
    const taken = this.#pending;
    if (taken.checkpoints.size === 0 && taken.writes.size === 0 && taken.blobs.size === 0) return write(null);
    this.#pending = empty();
    let built = false;
    const done = write((params) => {
      built = true;
      return batchStatements(taken, params);
    });
    // Reads and other flushes wait for this one (never rejects: the error is the caller's).
    const barrier = done.then(() => {
      if (!built) this.#restore(taken);
    }, () => this.#restore(taken));
    this.#flushing = barrier;
    try {
      return await done;
    } finally {
      await barrier;
      if (this.#flushing === barrier) this.#flushing = null;
    }
  }

  /** Puts back what was not written (newer puts of the same keys win), for the next flush. */
  #restore(taken: Pending): void {
    const now = this.#pending;
    for (const [k, v] of taken.checkpoints) if (!now.checkpoints.has(k)) now.checkpoints.set(k, v);
    for (const [k, v] of taken.blobs) if (!now.blobs.has(k)) now.blobs.set(k, v);
    for (const [k, v] of taken.writes) if (!now.writes.has(k)) now.writes.set(k, v);
  }
}

function empty(): Pending {
  return { checkpoints: new Map(), blobs: new Map(), writes: new Map() };
}

/** The batch's data-modifying statements, its values appended to `params`. */
function batchStatements(pending: Pending, params: unknown[]): string[] {
  const { checkpoints, blobs, writes } = pending;
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
}
