/**
 * The live channels of one process: per run, the events published here (or replayed), its
 * end, and the followers waiting for the next notify. Everything is in memory; the durable
 * log (./event-log.ts) and the bus (./bus.ts) are other jobs.
 */
import type { RunEvent, RunStatus } from "../../storage/index.ts";

/** How a run ended, as the executor reports it. */
export interface RunEnd {
  status: RunStatus;
  /** Final thread values (with `__interrupt__` when interrupted) or `{ __error__ }`. */
  output: unknown;
}

/** How long a run's channel stays after its end for followers that come late. */
const GRACE_MS = 30_000;

export class RunChannel {
  readonly events: RunEvent[] = [];
  end: RunEnd | null = null;
  /** True once this process runs the run (events come from here). */
  local = false;
  /** Created by this process, which (owning its database) will run it: nothing to poll. */
  expected = false;
  /** A replica that does not run it follows it: its events go over the bus too. */
  followedRemotely = false;
  readonly waiters = new Set<() => void>();
  /** Bumped by every notify, so a follower that was busy when it came does not sleep. */
  version = 0;
  /** Published events not in the durable log yet, its next write and the write under way (./event-log.ts). */
  unflushed: RunEvent[] = [];
  flushTimer: ReturnType<typeof setTimeout> | null = null;
  appending: Promise<void> | null = null;

  notify(): void {
    this.version++;
    for (const w of [...this.waiters]) w();
  }

  /**
   * Waits for a notify after `seen` (at once if one came already), the signal's abort, or
   * the timeout (0: none); true unless the timeout ended it.
   */
  waitFor(opts: { timeoutMs: number; signal?: AbortSignal; seen?: number }): Promise<boolean> {
    const { timeoutMs, signal, seen } = opts;
    if (seen !== undefined && this.version !== seen) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (woken: boolean) => {
        this.waiters.delete(done);
        signal?.removeEventListener("abort", done);
        if (timer) clearTimeout(timer);
        resolve(woken);
      };
      const done = () => finish(true);
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
      if (timeoutMs > 0) timer = setTimeout(() => finish(false), timeoutMs);
    });
  }
}

/** The channels of this process by run id. */
export class Channels {
  readonly #byRun = new Map<string, RunChannel>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  get(runId: string): RunChannel | undefined {
    return this.#byRun.get(runId);
  }

  /** The run's channel, made on first use. */
  open(runId: string): RunChannel {
    let ch = this.#byRun.get(runId);
    if (!ch) {
      ch = new RunChannel();
      this.#byRun.set(runId, ch);
    }
    return ch;
  }

  /** An ended run's channel is dropped after a grace period, unless followers still wait on it. */
  dropLater(runId: string, ch: RunChannel): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      if (ch.waiters.size === 0) this.#byRun.delete(runId);
    }, GRACE_MS);
    (t as { unref?: () => void }).unref?.();
    this.#timers.add(t);
  }

  /** Stops the grace timers and wakes every follower (the process stops). */
  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const ch of this.#byRun.values()) ch.notify();
  }
}

/**
 * Run ids remembered until a time (ms since epoch), at most 10,000 of them: expired ones are
 * pruned when the memory is full, and a new one is not kept while it stays full.
 */
export class ExpiringIds {
  readonly #until = new Map<string, number>();

  set(runId: string, ms: number): void {
    const now = Date.now();
    if (this.#until.size >= 10_000) { for (const [id, until] of this.#until) if (until < now) this.#until.delete(id); }
    if (this.#until.size < 10_000) this.#until.set(runId, now + ms);
  }

  /** Until when the run is remembered (ms since epoch), or undefined. */
  get(runId: string): number | undefined {
    return this.#until.get(runId);
  }

  delete(runId: string): void {
    this.#until.delete(runId);
  }
}
