/**
 * The run broker: live event channels per run (publish, replay, follow), the durable event
 * log behind them, cancellation signals and worker wake-ups. Within one process everything is
 * in memory and immediate; a {@link RemoteBus} (Redis, PostgreSQL) carries the same signals
 * across replicas. Publishing never waits for subscribers: a slow client only slows itself.
 *
 * This class is the face the other parts of the engine and the server use; each job is a
 * file of its own: ./channel.ts (live channels), ./event-log.ts (the durable log),
 * ./signals.ts and ./bus.ts (between replicas), ./cancellation.ts, ./hand-over.ts (a run
 * moving between replicas), ./follow.ts (following a run).
 */
import type { RunEvent, RunEventLog } from "../../storage/index.ts";
import type { RemoteBus } from "./bus.ts";
import { type CancelAction, RunAborts } from "./cancellation.ts";
import { Channels, ExpiringIds, type RunEnd } from "./channel.ts";
import { type CompactedLog, compactLog } from "./compact.ts";
import { EventLogWriter } from "./event-log.ts";
import { type FollowContext, Follower, type FollowOptions, REMOTE_POLL_MS, START_WAIT_MS } from "./follow.ts";
import { handOverChannel, resumeAfter } from "./hand-over.ts";
import { ReplicaSignals } from "./signals.ts";

// The types the server and the run service name with the broker.
export type { RemoteBus } from "./bus.ts";
export type { CancelAction } from "./cancellation.ts";
export type { RunEnd } from "./channel.ts";
export type { CompactedLog } from "./compact.ts";

/** How a broker is made (see the constructor). */
export interface RunBrokerOptions {
  log: Pick<RunEventLog, "append" | "read">;
  remote?: RemoteBus | null;
  exclusive?: boolean;
  pollMs?: number;
  startWaitMs?: number;
}

/** An event to publish: its name, its data (a string as is, anything else as JSON). */
export interface PublishedEvent {
  event: string;
  data: unknown;
  /** The event is in the log already (the claim writes the `metadata` event). */
  durable?: boolean;
}

/** The broker of one server process. */
export class RunBroker {
  readonly #channels = new Channels();
  readonly #read: Pick<RunEventLog, "read">;
  readonly #writer: EventLogWriter;
  readonly #aborts = new RunAborts();
  readonly #signals: ReplicaSignals;
  /** Runs queued here with affinity (see {@link hold}). */
  readonly #held = new ExpiringIds();

  readonly #exclusive: boolean;
  readonly #pollMs: number;
  readonly #startWaitMs: number;

  /**
   * `exclusive`: this process is the only one on its database (the embedded engine).
   * `pollMs`: the safety-net re-read of storage while following a run on another replica
   * over a bus (the bus wakes the follower; storage is read only when it must be).
   * `startWaitMs`: how long a follower of a pending run waits for it to start here before
   * reading storage.
   */
  constructor(opts: RunBrokerOptions) {
    const remote = opts.remote ?? null;
    this.#read = opts.log;
    this.#pollMs = opts.pollMs ?? REMOTE_POLL_MS;
    this.#startWaitMs = opts.startWaitMs ?? START_WAIT_MS;
    this.#exclusive = Boolean(opts.exclusive) && !remote;
    // Followed only here (no replica that does not run it said it follows it): logged less often.
    const alone = (ch: { followedRemotely: boolean }) => this.#exclusive || (remote !== null && !ch.followedRemotely);
    this.#writer = new EventLogWriter({ log: opts.log, alone });
    this.#signals = new ReplicaSignals({
      remote,
      channels: this.#channels,
      log: this.#writer,
      onCancel: (runId, action) => this.#aborts.cancel(runId, action),
    });
  }

  /**
   * Notes a run just created here. With an exclusive database it can only start (or be
   * cancelled) here, so its followers wait for that instead of polling storage.
   */
  expect(runId: string): void {
    if (this.#exclusive) this.#channels.open(runId).expected = true;
  }

  /**
   * Notes a run queued here that only this replica's workers may claim for `ms` (queue
   * affinity, ../queue/worker.ts): its followers here wait that long for it to start here before
   * following it on another replica (reading storage, asking over the bus).
   */
  hold(runId: string, ms: number): void {
    this.#held.set(runId, ms);
  }

  /**
   * Marks a run as executing here; returns the abort signal cancellation fires. `prior`: the
   * logged events of a run taken over from another replica; its stream goes on after them.
   */
  start(runId: string, prior?: readonly RunEvent[]): AbortSignal {
    this.#held.delete(runId);
    const ch = this.#channels.open(runId);
    if (prior) resumeAfter(ch, prior);
    ch.local = true;
    if (this.#signals.takeFollowedElsewhere(runId)) ch.followedRemotely = true;
    return this.#aborts.start(runId);
  }

  /** Appends an event to a running run; ids are consecutive integers from 1. */
  publish(runId: string, e: PublishedEvent): void {
    const ch = this.#channels.open(runId);
    const event: RunEvent = {
      id: ch.events.length + 1,
      event: e.event,
      data: typeof e.data === "string" ? e.data : JSON.stringify(e.data),
    };
    ch.events.push(event);
    if (!e.durable) ch.unflushed.push(event);
    this.#signals.relay(runId, ch, event);
    this.#writer.schedule(runId, ch);
    ch.notify();
  }

  /** Waits until every published event of a run is in the durable log. */
  async flush(runId: string): Promise<void> {
    const ch = this.#channels.get(runId);
    if (ch) await this.#writer.flush(runId, ch);
  }

  /**
   * Hands over the events of a run not yet in the durable log (after any write under way),
   * for the caller to write with the run's end; later batches are no longer scheduled.
   */
  async takeUnflushed(runId: string): Promise<RunEvent[]> {
    const ch = this.#channels.get(runId);
    return ch ? await this.#writer.take(ch) : [];
  }

  /**
   * The run's log for its end: when it ran here (memory holds every event of the run, a
   * resumed run's prior ones too), its whole log compacted (./compact.ts), to replace what was
   * logged; when it did not, or the compaction changes nothing, `unflushed` (from
   * {@link takeUnflushed}) as they are.
   */
  compact(runId: string, unflushed: readonly RunEvent[]): CompactedLog {
    const ch = this.#channels.get(runId);
    const kept = ch?.local ? compactLog(ch.events) : null;
    return kept ? { write: kept, replace: true } : { write: [...unflushed], replace: false };
  }

  /** The run's events in the durable log, after `afterId` (a run taken over goes on after them). */
  logged(runId: string, afterId?: number): Promise<RunEvent[]> {
    return this.#read.read(runId, afterId);
  }

  /**
   * Writes events to the durable log at once: those taken for a run's end that could not be
   * recorded, the last event of a run whose process died.
   */
  writeLog(runId: string, events: readonly RunEvent[]): Promise<void> {
    return this.#writer.write(runId, events);
  }

  /**
   * Stops executing a run here without ending it: another replica took it over. What was not
   * logged yet is dropped (the new holder's events take those ids); followers here go on
   * from the log and the bus, as for any run on another replica.
   */
  async handOver(runId: string): Promise<void> {
    const ch = this.#channels.get(runId);
    this.#aborts.forget(runId);
    if (ch) await handOverChannel({ runId, ch, log: this.#writer, remote: this.#signals.remote });
  }

  /** Aborts a run executing here whose lease this replica lost (see ../queue/worker.ts). */
  loseLease(runId: string): void {
    this.#aborts.loseLease(runId);
  }

  /** Ends a run's channel; followers finish after replaying what is left. */
  finish(runId: string, end: RunEnd): void {
    const ch = this.#channels.open(runId);
    ch.end = end;
    this.#aborts.forget(runId);
    this.#signals.relay(runId, ch, { end });
    ch.notify();
    this.#channels.dropLater(runId, ch);
  }

  /** Ends a run that never ran here (cancelled while pending, or recovered after a crash). */
  finishRemote(runId: string, end: RunEnd): void {
    this.finish(runId, end);
  }

  /**
   * Follows a run's events after `afterId`: replays, then follows live until the run ends.
   * `status` reads the run's status from storage, for runs executing on another replica;
   * `knownStatus`: the status the caller read, if it did (a run already claimed is not
   * waited for here: it runs on another replica, whose events are read at once).
   */
  async *follow(runId: string, opts: FollowOptions): AsyncGenerator<RunEvent, RunEnd | null> {
    const context: FollowContext = {
      runId,
      ch: this.#channels.open(runId),
      log: this.#read,
      remote: this.#signals.remote,
      heldUntil: this.#held.get(runId) ?? 0,
      pollMs: this.#pollMs,
      startWaitMs: this.#startWaitMs,
    };
    return yield* new Follower(context, opts).run();
  }

  /** Cancels a running run wherever it runs. */
  cancel(runId: string, action: CancelAction): void {
    if (!this.#aborts.cancel(runId, action)) this.#signals.remote?.publishCancel(runId, action);
  }

  /** Wakes the workers (here unless `remoteOnly`, and on other replicas when `broadcast`). */
  wake(opts: { runId?: string; broadcast?: boolean; remoteOnly?: boolean } = {}): void {
    this.#signals.wake(opts);
  }

  onWake(fn: (runId?: string) => void): () => void {
    return this.#signals.onWake(fn);
  }

  async close(): Promise<void> {
    this.#channels.close();
    await this.#signals.remote?.close();
  }
}
