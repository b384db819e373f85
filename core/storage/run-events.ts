/**
 * The durable stream log: every SSE event of a run with its integer id, so a client that
 * dropped can rejoin with `Last-Event-ID` and miss nothing, on any replica.
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

/** Append and read run events. */
export class RunEventLog {
  readonly #sql: SqlExecutor;
  readonly #enc: AtRestEncryption | null;
  /** With `encryption`, each event's data is stored sealed (`aes:<base64>`). */
  constructor(sql: SqlExecutor, opts: { encryption?: AtRestEncryption | null } = {}) {
    this.#sql = sql;
    this.#enc = opts.encryption ?? null;
  }

  async append(runId: string, events: readonly RunEvent[]): Promise<void> {
    if (events.length === 0) return;
    const params: unknown[] = [runId];
    const values = events.map((e) =>
      `($1, $${params.push(e.id)}, $${params.push(e.event)}, $${
        params.push(this.#enc ? this.#enc.sealText(e.data) : e.data)
      })`
    );
    await this.#sql.query(
      `INSERT INTO run_events (run_id, seq, event, data) VALUES ${
        values.join(", ")
      } ON CONFLICT (run_id, seq) DO NOTHING`,
      params,
    );
  }

  /** Events with id greater than `afterId`, in order. */
  async read(runId: string, afterId = 0): Promise<RunEvent[]> {
    const { rows } = await this.#sql.query<{ seq: number; event: string; data: string }>(
      "SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
      [runId, afterId],
    );
    return rows.map((r) => ({
      id: Number(r.seq),
      event: r.event,
      data: this.#enc ? this.#enc.openText(r.data) : r.data,
    }));
  }
}
