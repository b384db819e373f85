/**
 * The durable stream log: every SSE event of a run with its integer id, so a client that
 * dropped can rejoin with `Last-Event-ID` and miss nothing, on any replica.
 *
 * Events are written in batches, one row each (`run_event_batches`: the id of its last event
 * and its events, see {@link packBatch}, sealed as a whole with at-rest encryption): a streamed reply of 1,000 tokens is a few dozen rows while it runs, not 1,000.
 * `run_events` holds single events: the `metadata` event a run's claim writes, and rows
 * written before batches. A read merges both and keeps exactly the events after the id asked
 * for, wherever they are inside a batch.
 */
import type { AtRestEncryption } from "./encryption.ts";
import type { SqlExecutor } from "./sql.ts";

export interface RunEvent {
  /** Integer id, starting at 1 per run. */
  id: number;
  event: string;
  /** The event's data, already serialized as JSON. */
  data: string;
}

/**
 * One batch row's columns: the id of its last event, and its events as text: per event,
 * `<id>\n<event>\n<length of data>\n<data>` (an event's name never holds a newline; its data
 * is taken by length, as is: no escaping, no parsing).
 */
export function packBatch(events: readonly RunEvent[], enc: AtRestEncryption | null): { seq: number; text: string } {
  let seq = 0;
  let text = "";
  for (const e of events) {
    if (e.id > seq) seq = e.id;
    text += `${e.id}\n${e.event}\n${e.data.length}\n${e.data}`;
  }
  return { seq, text: enc ? enc.sealText(text) : text };
}

/** The events of a batch row's text (see {@link packBatch}). */
export function unpackBatch(stored: string, enc: AtRestEncryption | null): RunEvent[] {
  const text = enc ? enc.openText(stored) : stored;
  const events: RunEvent[] = [];
  for (let at = 0; at < text.length;) {
    const idEnd = text.indexOf("\n", at);
    const nameEnd = text.indexOf("\n", idEnd + 1);
    const lengthEnd = text.indexOf("\n", nameEnd + 1);
    if (idEnd < 0 || nameEnd < 0 || lengthEnd < 0) throw new Error("a stream log batch is damaged");
    const end = lengthEnd + 1 + Number(text.slice(nameEnd + 1, lengthEnd));
    events.push({
      id: Number(text.slice(at, idEnd)),
      event: text.slice(idEnd + 1, nameEnd),
      data: text.slice(lengthEnd + 1, end),
    });
    at = end;
  }
  return events;
}

/** Append and read run events. */
export class RunEventLog {
  readonly #sql: SqlExecutor;
  readonly #enc: AtRestEncryption | null;
  /** With `encryption`, each batch is stored sealed (`aes:<base64>`). */
  constructor(sql: SqlExecutor, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
  }

  /** Writes `events` as one row. */
  async append(runId: string, events: readonly RunEvent[]): Promise<void> {
    if (events.length === 0) return;
    const { seq, text } = packBatch(events, this.#enc);
    await this.#sql.query("INSERT INTO run_event_batches (run_id, seq, events) VALUES ($1, $2, $3)", [
      runId,
      seq,
      text,
    ]);
  }

  /** Events with id greater than `afterId`, in order. */
  async read(runId: string, afterId = 0): Promise<RunEvent[]> {
    // A batch's row has no `event` (its `data` is the batch's text) and its `seq` is its last id.
    const { rows } = await this.#sql.query<{ seq: number; event: string | null; data: string }>(
      `SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq > $2
       UNION ALL SELECT seq, NULL, events FROM run_event_batches WHERE run_id = $1 AND seq > $2`,
      [runId, afterId],
    );
    const byId = new Map<number, RunEvent>();
    for (const r of rows) {
      if (r.event !== null) {
        const id = Number(r.seq);
        if (!byId.has(id)) byId.set(id, { id, event: r.event, data: this.#enc ? this.#enc.openText(r.data) : r.data });
        continue;
      }
      // A batch wins over a single row of the same id (the end of a run rewrites its log as a batch).
      for (const e of unpackBatch(r.data, this.#enc)) if (e.id > afterId) byId.set(e.id, e);
    }
    return [...byId.values()].sort((a, b) => a.id - b.id);
  }
}
