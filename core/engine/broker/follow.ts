/**
 * Following a run's events: replayed after an id, then live until the run ends. A run that
 * runs (or ran) here is followed from memory; one queued here waits to start here; one on
 * another replica is followed over the bus, with storage (the durable log and the run's
 * status) read when the bus cannot say enough, and as a safety net.
 */
import type { RunEvent, RunEventLog, RunStatus } from "../../storage/index.ts";
import type { BusMessage, RemoteBus } from "./bus.ts";
import type { RunChannel, RunEnd } from "./channel.ts";
import { FLUSH_MS } from "./event-log.ts";

/** How often a follower of a run on another replica re-reads storage when a bus carries the signals. */
export const REMOTE_POLL_MS = 5000;
/** How long a follower of a pending run not started here waits for it to start here (usually within a moment) before reading storage. */
export const START_WAIT_MS = 50;

/** What a follower asks for (see RunBroker.follow). */
export interface FollowOptions {
  afterId?: number;
  signal?: AbortSignal;
  /** Reads the run's status from storage, for runs executing on another replica. */
  status: () => Promise<RunStatus | null>;
  /** The status the caller read, if it did (a run already claimed is not waited for here). */
  knownStatus?: RunStatus;
}

/** What a follower works with: the run's channel, the log, the bus, and the broker's timings. */
export interface FollowContext {
  runId: string;
  ch: RunChannel;
  log: Pick<RunEventLog, "read">;
  remote: RemoteBus | null;
  /** Until when the run is held for this replica's workers (queue affinity; 0: not held). */
  heldUntil: number;
  pollMs: number;
  startWaitMs: number;
}

/** One step of the loop: go round again at once, end the stream, or wait (0: for a notify only). */
type Step = "again" | { end: RunEnd | null } | { waitMs: number };

/** Follows one run for one caller: `run()` yields its events and returns its end (null: unknown or aborted). */
export class Follower {
  readonly #c: FollowContext;
  readonly #opts: FollowOptions;
  #last: number;
  #queue: BusMessage[] = [];
  /** Bus events past a gap: the missing ones are being written to the log (see FLUSH_MS). */
  readonly #ahead = new Map<number, RunEvent>();
  /** Only a run still pending may be about to start here. */
  #firstRemote: boolean;
  #readStorage = true;
  /** Queued here with affinity: it starts here within that time, or may start elsewhere after. */
  #heldUntil: number;
  #subscribed = false;
  #unsubscribe: (() => void) | undefined;

  constructor(c: FollowContext, opts: FollowOptions) {
    this.#c = c;
    this.#opts = opts;
    this.#last = opts.afterId ?? 0;
    this.#firstRemote = opts.knownStatus === undefined || opts.knownStatus === "pending";
    this.#heldUntil = c.heldUntil;
  }

  async *run(): AsyncGenerator<RunEvent, RunEnd | null> {
    const { ch } = this.#c;
    try {
      if (!ch.local && !ch.end && this.#heldUntil <= Date.now()) await this.#goRemote();
      while (!this.#opts.signal?.aborted) {
        const seen = ch.version;
        if (ch.end && !ch.local) {
          yield* this.#fromEndedLog();
          return ch.end;
        }
        let step: Step;
        if (ch.local) step = yield* this.#fromMemory();
        else if (await this.#waitForStart(seen)) step = "again";
        else step = yield* this.#fromRemote();
        if (step === "again") continue;
        if ("end" in step) return step.end;
        await this.#idle(seen, step.waitMs);
      }
      return null;
    } finally {
      this.#unsubscribe?.();
      this.#queue = [];
    }
  }

  /**
   * Subscribes to the run on the bus, then says this replica follows it: the replica running
   * it (or the one that will) publishes its events from then on. Always before storage is
   * read for it: an event published after the read is then on the bus. Not done while the
   * run runs here or is held for this replica's workers (most runs: memory has every event),
   * which saves a LISTEN and an UNLISTEN per run on PostgreSQL.
   */
  async #goRemote(): Promise<void> {
    const { remote, runId, ch } = this.#c;
    if (this.#subscribed || !remote) return;
    this.#subscribed = true;
    this.#unsubscribe = await remote.subscribeRun(runId, (m) => {
      this.#queue.push(m);
      ch.notify();
    });
    if (!ch.local && this.#heldUntil <= Date.now()) remote.publishFollow(runId);
  }

  /** The logged events after the last one yielded. */
  async *#fromLog(): AsyncGenerator<RunEvent, void> {
    for (const e of await this.#c.log.read(this.#c.runId, this.#last)) {
      this.#last = e.id;
      yield e;
    }
  }

  /**
   * An ended run's log, compacted at its end (./compact.ts: ids skip the events it dropped, a
   * streamed message is one event at its last chunk's id), merged with the events the bus
   * brought past the last one yielded: those win, so a follower that had part of a message
   * from the bus goes on with its chunks instead of getting the whole message again.
   */
  async *#fromEndedLog(): AsyncGenerator<RunEvent, void> {
    const byId = new Map<number, RunEvent>();
    for (const e of await this.#c.log.read(this.#c.runId, this.#last)) byId.set(e.id, e);
    for (const e of this.#ahead.values()) if (e.id > this.#last && e.data !== undefined) byId.set(e.id, e);
    this.#ahead.clear();
    for (const e of [...byId.values()].sort((a, b) => a.id - b.id)) {
      this.#last = e.id;
      yield e;
    }
  }

  /** A run that is (or was) local: memory holds every event, durable ones too. */
  async *#fromMemory(): AsyncGenerator<RunEvent, Step> {
    const { ch } = this.#c;
    if (ch.events.length && ch.events[0]!.id > this.#last + 1) {
      for (const e of await this.#c.log.read(this.#c.runId, this.#last)) {
        if (e.id < ch.events[0]!.id) {
          this.#last = e.id;
          yield e;
        }
      }
    }
    while (this.#last < ch.events.length) {
      const e = ch.events[this.#last]!;
      this.#last = e.id;
      if (e.event) yield e; // "": an id a resumed run skipped (./hand-over.ts)
    }
    if (ch.end && this.#last >= ch.events.length) return { end: ch.end };
    return { waitMs: 0 };
  }

  /**
   * A run not local (yet) that may start here: waits for that (true: it waited, look
   * again). Then subscribes on the bus.
   */
  async #waitForStart(seen: number): Promise<boolean> {
    const { ch } = this.#c;
    const signal = this.#opts.signal;
    if (ch.expected && !ch.end) {
      // Queued here: it starts here (or is cancelled here), which notifies. The timeout
      // is only a safety net.
      await ch.waitFor({ timeoutMs: 5000, signal, seen });
      if (!ch.local && !ch.end) ch.expected = false;
      return true;
    }
    if (this.#heldUntil && !ch.end) {
      const ms = this.#heldUntil - Date.now();
      if (ms > 0) {
        // Held for this replica's workers: starting here notifies (timeout: the affinity's end).
        await ch.waitFor({ timeoutMs: ms, signal, seen });
        return true;
      }
      // Not started here in time: other replicas may take it now.
      this.#heldUntil = 0;
    }
    await this.#goRemote();
    if (this.#firstRemote) {
      // A pending run is usually claimed here within a moment: wait for that before polling storage.
      this.#firstRemote = false;
      await ch.waitFor({ timeoutMs: this.#c.startWaitMs, signal, seen });
      return true;
    }
    return false;
  }

  /** A run on another replica: what the bus brought, then storage when it must be read. */
  async *#fromRemote(): AsyncGenerator<RunEvent, Step> {
    const { ch, remote } = this.#c;
    const ahead = this.#ahead;
    let end: RunEnd | null = null;
    for (const m of this.#queue.splice(0)) {
      if ("end" in m) end = m.end;
      else if (m.id > this.#last) ahead.set(m.id, m);
    }
    for (let e = ahead.get(this.#last + 1); e && e.data !== undefined; e = ahead.get(this.#last + 1)) {
      ahead.delete(e.id);
      this.#last = e.id;
      yield e;
    }
    if (end) {
      yield* this.#fromEndedLog();
      return { end };
    }
    this.#dropSeen();
    if (this.#readStorage || ahead.size || !remote) {
      this.#readStorage = false;
      const status = await this.#opts.status();
      // Read before the log: a run that ends between the two reads is followed from its
      // compacted log as if it were live (at worst a message it had begun comes whole again).
      const ended = status === null || (status !== "pending" && status !== "running");
      yield* ended ? this.#fromEndedLog() : this.#fromLog();
      if (ended) {
        if (ch.end) return "again";
        return { end: status ? { status, output: null } : null };
      }
      this.#dropSeen();
      if (ahead.has(this.#last + 1) && ahead.get(this.#last + 1)!.data !== undefined) return "again";
    }
    // Past a gap, the missing events reach the log within a flush: read again then.
    return { waitMs: !remote ? 250 : ahead.size ? FLUSH_MS * 2 : this.#c.pollMs };
  }

  /** Forgets the bus events already yielded (from the log). */
  #dropSeen(): void {
    for (const id of this.#ahead.keys()) if (id <= this.#last) this.#ahead.delete(id);
  }

  /** Waits for a notify; on the timeout storage is read at the next step. */
  async #idle(seen: number, timeoutMs: number): Promise<void> {
    const { ch, remote, runId } = this.#c;
    const woken = await ch.waitFor({ timeoutMs, signal: this.#opts.signal, seen });
    if (!woken) {
      this.#readStorage = true;
      // Said again at every poll: the run may have moved (taken over) or not started yet.
      if (remote && timeoutMs === this.#c.pollMs && !ch.local) remote.publishFollow(runId);
    }
  }
}
