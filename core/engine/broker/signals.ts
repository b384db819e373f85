/**
 * The broker's side of the signals between replicas (a {@link RemoteBus}, ./bus.ts): the
 * events of a run followed on another replica, who follows what, cancellations and worker
 * wake-ups. Without a bus, only this process hears them.
 */
import type { BusMessage, RemoteBus } from "./bus.ts";
import type { CancelAction } from "./cancellation.ts";
import { type Channels, ExpiringIds, type RunChannel } from "./channel.ts";
import type { EventLogWriter } from "./event-log.ts";

/**
 * How long a replica remembers that another one follows a run it does not run (yet): the
 * follower says so again at every safety-net poll (./follow.ts).
 */
const FOLLOW_MEMORY_MS = 60_000;

export class ReplicaSignals {
  readonly remote: RemoteBus | null;
  readonly #channels: Channels;
  readonly #log: EventLogWriter;
  /** Runs not executing here that another replica follows. */
  readonly #followedElsewhere = new ExpiringIds();
  readonly #wakeListeners = new Set<(runId?: string) => void>();

  /** `onCancel`: a cancel from another replica (for a run that may execute here). */
  constructor(opts: {
    remote: RemoteBus | null;
    channels: Channels;
    log: EventLogWriter;
    onCancel: (runId: string, action: CancelAction) => void;
  }) {
    this.remote = opts.remote;
    this.#channels = opts.channels;
    this.#log = opts.log;
    this.remote?.onCancel(opts.onCancel);
    this.remote?.onWake(() => this.#emitWake());
    this.remote?.onFollow((runId) => this.#followedFrom(runId));
  }

  /** Sends an event (or the end) of a run published here over the bus, when a replica that does not run it follows it. */
  relay(runId: string, ch: RunChannel, m: BusMessage): void {
    // Only then: most runs are followed where they run.
    if (ch.followedRemotely) this.remote?.publishEvent(runId, m);
  }

  /**
   * Another replica follows `runId`. Running here (or just ended): from now on its events go
   * over the bus, and those so far go again (the follower skips what it has). Not here: kept
   * in mind, in case it starts here.
   */
  #followedFrom(runId: string): void {
    const ch = this.#channels.get(runId);
    if (ch && (ch.local || ch.end)) {
      if (ch.followedRemotely) return;
      ch.followedRemotely = true;
      // Logged sooner from now on (see ./event-log.ts).
      this.#log.hurry(runId, ch);
      for (const e of ch.events) if (e.event) this.remote!.publishEvent(runId, e);
      if (ch.end) this.remote!.publishEvent(runId, { end: ch.end });
      return;
    }
    this.#followedElsewhere.set(runId, FOLLOW_MEMORY_MS);
  }

  /** A run starts here: whether another replica said lately that it follows it (then forgotten). */
  takeFollowedElsewhere(runId: string): boolean {
    const until = this.#followedElsewhere.get(runId);
    if (until === undefined) return false;
    this.#followedElsewhere.delete(runId);
    return until >= Date.now();
  }

  /** Wakes the workers (here unless `remoteOnly`, and on other replicas when `broadcast`). */
  wake(opts: { runId?: string; broadcast?: boolean; remoteOnly?: boolean }): void {
    if (!opts.remoteOnly) this.#emitWake(opts.runId);
    if (opts.broadcast || opts.remoteOnly) this.remote?.publishWake();
  }

  #emitWake(runId?: string): void {
    for (const fn of this.#wakeListeners) fn(runId);
  }

  onWake(fn: (runId?: string) => void): () => void {
    this.#wakeListeners.add(fn);
    return () => this.#wakeListeners.delete(fn);
  }
}
