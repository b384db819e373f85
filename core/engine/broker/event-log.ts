/**
 * The durable event log behind the live channels: a run's published events are written to
 * storage in batches, one row each (live followers read them from memory at once), and what
 * is left when the run ends is handed to the executor to write with the run's end.
 */
import type { RunEvent, RunEventLog } from "../../storage/index.ts";
import type { RunChannel } from "./channel.ts";

/**
 * Events are written to the durable log in batches at most this late (live followers get
 * them at once, from memory); what is left when the run ends is written with its status.
 */
export const FLUSH_MS = 25;
/**
 * The same on an exclusive database (the embedded engine), and on a shared one with a bus
 * while no replica that does not run the run follows it: every follower is in this process
 * and reads the run's events from memory, so the log mid-run serves only a crash (the run is
 * failed at the next start, or taken over by another replica, with what was logged). Most
 * runs end within it: their events are written by the statement that records the end, not by
 * one more statement per run. Once a replica that does not run it follows it (it says so over
 * the bus, see ./follow.ts), {@link FLUSH_MS} again: it may need the log (an event too large for
 * the bus, a gap).
 */
const EXCLUSIVE_FLUSH_MS = 250;

/** Writes the channels' events to the durable log. */
export class EventLogWriter {
  readonly #log: Pick<RunEventLog, "append">;
  /** Whether only followers in this process read the run's events (see EXCLUSIVE_FLUSH_MS). */
  readonly #alone: (ch: RunChannel) => boolean;

  constructor(opts: { log: Pick<RunEventLog, "append">; alone: (ch: RunChannel) => boolean }) {
    this.#log = opts.log;
    this.#alone = opts.alone;
  }

  /** Schedules the next batch of the run's unwritten events, unless one is scheduled or under way. */
  schedule(runId: string, ch: RunChannel): void {
    if (ch.flushTimer || ch.appending || !ch.unflushed.length) return;
    ch.flushTimer = setTimeout(() => this.#writeNow(runId, ch), this.#alone(ch) ? EXCLUSIVE_FLUSH_MS : FLUSH_MS);
    (ch.flushTimer as { unref?: () => void }).unref?.();
  }

  /** Schedules the next batch again, sooner now that a replica elsewhere follows the run. */
  hurry(runId: string, ch: RunChannel): void {
    if (!ch.flushTimer) return;
    clearTimeout(ch.flushTimer);
    ch.flushTimer = null;
    this.schedule(runId, ch);
  }

  #writeNow(runId: string, ch: RunChannel): void {
    if (ch.flushTimer) clearTimeout(ch.flushTimer);
    ch.flushTimer = null;
    if (ch.appending || !ch.unflushed.length) return;
    const batch = ch.unflushed;
    ch.unflushed = [];
    ch.appending = this.#log.append(runId, batch).catch(() => {
      ch.unflushed = [...batch, ...ch.unflushed]; // written with the run's end, or the next batch
    }).finally(() => {
      ch.appending = null;
      this.schedule(runId, ch);
    });
  }

  /** Writes events to the durable log at once, outside the batches. */
  write(runId: string, events: readonly RunEvent[]): Promise<void> {
    return this.#log.append(runId, events);
  }

  /** Waits until every published event of the run is in the durable log. */
  async flush(runId: string, ch: RunChannel): Promise<void> {
    for (let tries = 0; (ch.appending || ch.unflushed.length) && tries < 100; tries++) {
      if (ch.appending) await ch.appending;
      else {
        this.#writeNow(runId, ch);
        if (ch.appending) await ch.appending;
      }
    }
  }

  /**
   * Hands over the run's events not yet in the durable log (after any write under way), for
   * the caller to write with the run's end; later batches are no longer scheduled.
   */
  async take(ch: RunChannel): Promise<RunEvent[]> {
    if (ch.flushTimer) clearTimeout(ch.flushTimer);
    ch.flushTimer = null;
    while (ch.appending) await ch.appending;
    if (ch.flushTimer) clearTimeout(ch.flushTimer);
    ch.flushTimer = null;
    const batch = ch.unflushed;
    ch.unflushed = [];
    return batch;
  }
}
