/**
 * The run broker: live event channels per run (publish, replay, follow), the durable event
 * log behind them, cancellation signals and worker wake-ups. Within one process everything is
 * in memory and immediate; a {@link RemoteBus} (Redis) carries the same signals across
 * replicas. Publishing never waits for subscribers: a slow client only slows itself.
 */
import type { RunEvent, RunEventLog, RunStatus } from "../../storage/index.ts";

export type CancelAction = "interrupt" | "rollback";

/** How a run ended, as the executor reports it. */
export interface RunEnd {
  status: RunStatus;
  /** Final thread values (with `__interrupt__` when interrupted) or `{ __error__ }`. */
  output: unknown;
}

/**
 * Signals between replicas (over Redis pub/sub, or PostgreSQL LISTEN/NOTIFY). A message may
 * carry an event without its data (`data` absent): the event exists, read it from the log.
 */
export interface RemoteBus {
  publishEvent(runId: string, event: RunEvent | { end: RunEnd }): void;
  /** Resolves once messages published from now on are delivered; returns the unsubscribe. */
  subscribeRun(runId: string, onMessage: (m: RunEvent | { end: RunEnd }) => void): Promise<() => void>;
  publishCancel(runId: string, action: CancelAction): void;
  onCancel(fn: (runId: string, action: CancelAction) => void): void;
  publishWake(): void;
  onWake(fn: () => void): void;
  /** Says that a replica follows a run it does not run (see {@link RunBroker.follow}). */
  publishFollow(runId: string): void;
  onFollow(fn: (runId: string) => void): void;
  close(): Promise<void>;
}

type BusMessage = RunEvent | { end: RunEnd };

/**
 * The payload of a signal a bus sends to every replica (a wake-up, a follow), naming its
 * sender: pub/sub delivers it to the sender too, which skips it (its own follower of a run
 * that starts here would otherwise make this replica publish the run's events over the bus).
 */
export function signalPayload(sender: string, body: string): string {
  return `@${sender}|${body}`;
}

/** The body of a signal, or null when `self` sent it (a bare body: a replica of an older version). */
export function signalBody(self: string, payload: string): string | null {
  const m = /^@([0-9a-f]{12})\|/.exec(payload);
  if (!m) return payload;
  return m[1] === self ? null : payload.slice(m[0].length);
}

/** A bus's sender id for {@link signalPayload}. */
export function newSender(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

/**
 * The run subscriptions of a {@link RemoteBus}, by channel: the first subscriber of a channel
 * makes the bus listen (every subscriber waits for that), the last one to leave stops it.
 */
export class BusSubscriptions {
  readonly #listen: (channel: string) => Promise<unknown>;
  readonly #unlisten: (channel: string) => Promise<unknown>;
  readonly #byChannel = new Map<string, { fns: Set<(m: BusMessage) => void>; ready: Promise<unknown> }>();

  constructor(listen: (channel: string) => Promise<unknown>, unlisten: (channel: string) => Promise<unknown>) {
    this.#listen = listen;
    this.#unlisten = unlisten;
  }

  /** The channels listened to now (to listen again on a new connection). */
  channels(): string[] {
    return [...this.#byChannel.keys()];
  }

  /** Hands a message (parsed only when someone listens) to the channel's subscribers. */
  deliver(channel: string, parse: () => BusMessage): void {
    const entry = this.#byChannel.get(channel);
    if (!entry) return;
    const m = parse();
    for (const fn of entry.fns) fn(m);
  }

  async subscribe(channel: string, onMessage: (m: BusMessage) => void): Promise<() => void> {
    let entry = this.#byChannel.get(channel);
    if (!entry) {
      entry = { fns: new Set(), ready: this.#listen(channel) };
      this.#byChannel.set(channel, entry);
    }
    const e = entry;
    e.fns.add(onMessage);
    const unsubscribe = () => {
      e.fns.delete(onMessage);
      if (e.fns.size === 0 && this.#byChannel.get(channel) === e) {
        this.#byChannel.delete(channel);
        void this.#unlisten(channel).catch(() => {});
      }
    };
    try {
      await e.ready;
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }
}

class RunChannel {
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
  unflushed: RunEvent[] = [];
  flushTimer: ReturnType<typeof setTimeout> | null = null;
  appending: Promise<void> | null = null;

  notify(): void {
    this.version++;
    for (const w of [...this.waiters]) w();
  }
}

const GRACE_MS = 30_000;
/**
 * Events are written to the durable log in batches at most this late (live followers get
 * them at once, from memory); what is left when the run ends is written with its status.
 */
const FLUSH_MS = 25;
/**
 * The same on an exclusive database (the embedded engine), and on a shared one with a bus
 * while no replica that does not run the run follows it: every follower is in this process
 * and reads the run's events from memory, so the log mid-run serves only a crash (the run is
 * failed at the next start, or taken over by another replica, with what was logged). Most
 * runs end within it: their events are written by the statement that records the end, not by
 * one more statement per run. Once a replica that does not run it follows it (it says so over
 * the bus, see follow), {@link FLUSH_MS} again: it may need the log (an event too large for
 * the bus, a gap).
 */
const EXCLUSIVE_FLUSH_MS = 250;
/**
 * Ids a run taken over from a dead replica skips before its next event: more than that
 * replica can have published without logging (it logs every {@link FLUSH_MS} while another
 * replica follows the run: only such followers can have seen events it did not log).
 */
const RESUME_ID_GAP = 1000;
/** How often a follower of a run on another replica re-reads storage when a bus carries the signals. */
const REMOTE_POLL_MS = 5000;
/**
 * How long a replica remembers that another one follows a run it does not run (yet): the
 * follower says so again at every safety-net poll ({@link REMOTE_POLL_MS}).
 */
const FOLLOW_MEMORY_MS = 60_000;
/** How long a follower of a pending run not started here waits for it to start here (usually within a moment) before reading storage. */
const START_WAIT_MS = 50;

/** The broker of one server process. */
export class RunBroker {
  readonly #log: Pick<RunEventLog, "append" | "read">;
  readonly #remote: RemoteBus | null;
  readonly #channels = new Map<string, RunChannel>();
  readonly #aborts = new Map<string, AbortController>();
  readonly #wakeListeners = new Set<(runId?: string) => void>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  /** Runs not executing here that another replica follows, until when (ms since epoch). */
  readonly #followedElsewhere = new Map<string, number>();
  /** Runs queued here with affinity (see {@link hold}), until when (ms since epoch). */
  readonly #held = new Map<string, number>();

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
  constructor(
    opts: {
      log: Pick<RunEventLog, "append" | "read">;
      remote?: RemoteBus | null;
      exclusive?: boolean;
      pollMs?: number;
      startWaitMs?: number;
    },
  ) {
    this.#log = opts.log;
    this.#pollMs = opts.pollMs ?? REMOTE_POLL_MS;
    this.#startWaitMs = opts.startWaitMs ?? START_WAIT_MS;
    this.#remote = opts.remote ?? null;
    this.#exclusive = Boolean(opts.exclusive) && !this.#remote;
    this.#remote?.onCancel((runId, action) => this.#abortLocal(runId, action));
    this.#remote?.onWake(() => this.#emitWake());
    this.#remote?.onFollow((runId) => this.#followedFrom(runId));
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
      if (ch.flushTimer) {
        // Logged sooner from now on (see EXCLUSIVE_FLUSH_MS).
        clearTimeout(ch.flushTimer);
        ch.flushTimer = null;
        this.#scheduleFlush(runId, ch);
      }
      for (const e of ch.events) if (e.event) this.#remote!.publishEvent(runId, e);
      if (ch.end) this.#remote!.publishEvent(runId, { end: ch.end });
      return;
    }
    const now = Date.now();
    if (this.#followedElsewhere.size >= 10_000) {
      for (const [id, until] of this.#followedElsewhere) if (until < now) this.#followedElsewhere.delete(id);
    }
    if (this.#followedElsewhere.size < 10_000) this.#followedElsewhere.set(runId, now + FOLLOW_MEMORY_MS);
  }

  #channel(runId: string): RunChannel {
    let ch = this.#channels.get(runId);
    if (!ch) {
      ch = new RunChannel();
      this.#channels.set(runId, ch);
    }
    return ch;
  }

  /**
   * Notes a run just created here. With an exclusive database it can only start (or be
   * cancelled) here, so its followers wait for that instead of polling storage.
   */
  expect(runId: string): void {
    if (this.#exclusive) this.#channel(runId).expected = true;
  }

  /**
   * Notes a run queued here that only this replica's workers may claim for `ms` (queue
   * affinity, ../queue/worker.ts): its followers here wait that long for it to start here before
   * following it on another replica (reading storage, asking over the bus).
   */
  hold(runId: string, ms: number): void {
    const now = Date.now();
    if (this.#held.size >= 10_000) { for (const [id, until] of this.#held) if (until < now) this.#held.delete(id); }
    if (this.#held.size < 10_000) this.#held.set(runId, now + ms);
  }

  /**
   * Marks a run as executing here; returns the abort signal cancellation fires. `prior`: the
   * logged events of a run taken over from another replica; its stream goes on after them.
   */
  start(runId: string, prior?: readonly RunEvent[]): AbortSignal {
    this.#held.delete(runId);
    const ch = this.#channel(runId);
    if (prior) {
      // The dead replica may have published events it never logged (followers elsewhere saw
      // them over the bus): this replica's ids start past a gap, so none is taken twice. In
      // memory, the ids not logged are placeholders followers skip.
      const next = (prior.at(-1)?.id ?? 0) + RESUME_ID_GAP;
      const byId = new Map(prior.map((e) => [e.id, e]));
      ch.events.length = 0;
      for (let id = 1; id < next; id++) ch.events.push(byId.get(id) ?? { id, event: "", data: "" });
      ch.end = null;
    }
    ch.local = true;
    const until = this.#followedElsewhere.get(runId);
    if (until !== undefined) {
      this.#followedElsewhere.delete(runId);
      if (until >= Date.now()) ch.followedRemotely = true;
    }
    const controller = new AbortController();
    this.#aborts.set(runId, controller);
    return controller.signal;
  }

  /**
   * Appends an event to a running run; ids are consecutive integers from 1. `durable`: the
   * event is in the log already (the claim writes the `metadata` event).
   */
  publish(runId: string, event: string, data: unknown, opts: { durable?: boolean } = {}): void {
    const ch = this.#channel(runId);
    const e: RunEvent = {
      id: ch.events.length + 1,
      event,
      data: typeof data === "string" ? data : JSON.stringify(data),
    };
    ch.events.push(e);
    if (!opts.durable) ch.unflushed.push(e);
    // Only when a replica that does not run it follows it: most runs are followed where they run.
    if (ch.followedRemotely) this.#remote?.publishEvent(runId, e);
    this.#scheduleFlush(runId, ch);
    ch.notify();
  }

  #scheduleFlush(runId: string, ch: RunChannel): void {
    if (ch.flushTimer || ch.appending || !ch.unflushed.length) return;
    // Followed only here (no replica that does not run it said it follows it): see EXCLUSIVE_FLUSH_MS.
    const alone = this.#exclusive || (this.#remote !== null && !ch.followedRemotely);
    ch.flushTimer = setTimeout(() => this.#flushNow(runId, ch), alone ? EXCLUSIVE_FLUSH_MS : FLUSH_MS);
    (ch.flushTimer as { unref?: () => void }).unref?.();
  }

  #flushNow(runId: string, ch: RunChannel): void {
    if (ch.flushTimer) clearTimeout(ch.flushTimer);
    ch.flushTimer = null;
    if (ch.appending || !ch.unflushed.length) return;
    const batch = ch.unflushed;
    ch.unflushed = [];
    ch.appending = this.#log.append(runId, batch).catch(() => {
      ch.unflushed = [...batch, ...ch.unflushed]; // written with the run's end, or the next batch
    }).finally(() => {
      ch.appending = null;
      this.#scheduleFlush(runId, ch);
    });
  }

  /** Waits until every published event of a run is in the durable log. */
  async flush(runId: string): Promise<void> {
    const ch = this.#channels.get(runId);
    for (let tries = 0; ch && (ch.appending || ch.unflushed.length) && tries < 100; tries++) {
      if (ch.appending) await ch.appending;
      else {
        this.#flushNow(runId, ch);
        if (ch.appending) await ch.appending;
      }
    }
  }

  /**
   * Hands over the events of a run not yet in the durable log (after any write under way),
   * for the caller to write with the run's end; later batches are no longer scheduled.
   */
  async takeUnflushed(runId: string): Promise<RunEvent[]> {
    const ch = this.#channels.get(runId);
    if (!ch) return [];
    if (ch.flushTimer) clearTimeout(ch.flushTimer);
    ch.flushTimer = null;
    while (ch.appending) await ch.appending;
    if (ch.flushTimer) clearTimeout(ch.flushTimer);
    ch.flushTimer = null;
    const batch = ch.unflushed;
    ch.unflushed = [];
    return batch;
  }

  /**
   * Stops executing a run here without ending it: another replica took it over. What was not
   * logged yet is dropped (the new holder's events take those ids); followers here go on
   * from the log and the bus, as for any run on another replica.
   */
  async handOver(runId: string): Promise<void> {
    const ch = this.#channels.get(runId);
    this.#aborts.delete(runId);
    if (!ch) return;
    await this.takeUnflushed(runId);
    ch.local = false;
    // Its followers here now follow it on the replica that took it over.
    if (ch.waiters.size) this.#remote?.publishFollow(runId);
    ch.notify();
  }

  /** Aborts a run executing here whose lease this replica lost (see worker.ts). */
  loseLease(runId: string): void {
    this.#aborts.get(runId)?.abort(new LeaseLost());
  }

  /** Ends a run's channel; followers finish after replaying what is left. */
  finish(runId: string, end: RunEnd): void {
    const ch = this.#channel(runId);
    ch.end = end;
    this.#aborts.delete(runId);
    if (ch.followedRemotely) this.#remote?.publishEvent(runId, { end });
    ch.notify();
    const t = setTimeout(() => {
      this.#timers.delete(t);
      if (ch.waiters.size === 0) this.#channels.delete(runId);
    }, GRACE_MS);
    (t as { unref?: () => void }).unref?.();
    this.#timers.add(t);
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
  async *follow(
    runId: string,
    opts: { afterId?: number; signal?: AbortSignal; status: () => Promise<RunStatus | null>; knownStatus?: RunStatus },
  ): AsyncGenerator<RunEvent, RunEnd | null> {
    let last = opts.afterId ?? 0;
    const ch = this.#channel(runId);
    let remoteQueue: Array<RunEvent | { end: RunEnd }> = [];
    /** Bus events past a gap: the missing ones are being written to the log (see FLUSH_MS). */
    const ahead = new Map<number, RunEvent>();
    // Only a run still pending may be about to start here.
    let firstRemote = opts.knownStatus === undefined || opts.knownStatus === "pending";
    let readStorage = true;
    let unsubscribe: (() => void) | undefined;
    // Queued here with affinity: it starts here within that time, or may start elsewhere after.
    let heldUntil = this.#held.get(runId) ?? 0;
    /**
     * Subscribes to the run on the bus, then says this replica follows it: the replica running
     * it (or the one that will) publishes its events from then on. Always before storage is
     * read for it: an event published after the read is then on the bus. Not done while the
     * run runs here or is held for this replica's workers (most runs: memory has every event),
     * which saves a LISTEN and an UNLISTEN per run on PostgreSQL.
     */
    let subscribed = false;
    const goRemote = async () => {
      if (subscribed || !this.#remote) return;
      subscribed = true;
      unsubscribe = await this.#remote.subscribeRun(runId, (m) => {
        remoteQueue.push(m);
        ch.notify();
      });
      if (!ch.local && heldUntil <= Date.now()) this.#remote.publishFollow(runId);
    };
    try {
      if (!ch.local && !ch.end && heldUntil <= Date.now()) await goRemote();
      while (!opts.signal?.aborted) {
        const seen = ch.version;
        if (ch.end && !ch.local) {
          for (const e of await this.#log.read(runId, last)) {
            last = e.id;
            yield e;
          }
          return ch.end;
        }
        let timeoutMs = 0;
        if (ch.local) {
          // When the run is (or was) local, memory holds every event; durable ones too.
          if (ch.events.length && ch.events[0]!.id > last + 1) {
            for (const e of await this.#log.read(runId, last)) {
              if (e.id < ch.events[0]!.id) {
                last = e.id;
                yield e;
              }
            }
          }
          while (last < ch.events.length) {
            const e = ch.events[last]!;
            last = e.id;
            if (e.event) yield e; // "": an id a resumed run skipped (see start)
          }
          if (ch.end && last >= ch.events.length) return ch.end;
        } else {
          if (ch.expected && !ch.end) {
            // Queued here: it starts here (or is cancelled here), which notifies. The timeout
            // is only a safety net.
            await this.#waitFor(ch, 5000, opts.signal, seen);
            if (!ch.local && !ch.end) ch.expected = false;
            continue;
          }
          if (heldUntil && !ch.end) {
            const ms = heldUntil - Date.now();
            if (ms > 0) {
              // Held for this replica's workers: starting here notifies (timeout: the affinity's end).
              await this.#waitFor(ch, ms, opts.signal, seen);
              continue;
            }
            // Not started here in time: other replicas may take it now.
            heldUntil = 0;
          }
          await goRemote();
          if (firstRemote) {
            // A pending run is usually claimed here within a moment: wait for that before polling storage.
            firstRemote = false;
            await this.#waitFor(ch, this.#startWaitMs, opts.signal, seen);
            continue;
          }
          let end: RunEnd | null = null;
          for (const m of remoteQueue.splice(0)) {
            if ("end" in m) end = m.end;
            else if (m.id > last) ahead.set(m.id, m);
          }
          for (let e = ahead.get(last + 1); e && e.data !== undefined; e = ahead.get(last + 1)) {
            ahead.delete(e.id);
            last = e.id;
            yield e;
          }
          if (end) {
            for (const e of await this.#log.read(runId, last)) {
              last = e.id;
              yield e;
            }
            return end;
          }
          for (const id of ahead.keys()) if (id <= last) ahead.delete(id);
          if (readStorage || ahead.size || !this.#remote) {
            readStorage = false;
            const status = await opts.status();
            for (const e of await this.#log.read(runId, last)) {
              last = e.id;
              yield e;
            }
            if (status === null || (status !== "pending" && status !== "running")) {
              if (ch.end) continue;
              return status ? { status, output: null } : null;
            }
            for (const id of ahead.keys()) if (id <= last) ahead.delete(id);
            if (ahead.has(last + 1) && ahead.get(last + 1)!.data !== undefined) continue;
          }
          // Past a gap, the missing events reach the log within a flush: read again then.
          timeoutMs = !this.#remote ? 250 : ahead.size ? FLUSH_MS * 2 : this.#pollMs;
        }
        const woken = await this.#waitFor(ch, timeoutMs, opts.signal, seen);
        if (!woken) {
          readStorage = true;
          // Said again at every poll: the run may have moved (taken over) or not started yet.
          if (this.#remote && timeoutMs === this.#pollMs && !ch.local) this.#remote.publishFollow(runId);
        }
      }
      return null;
    } finally {
      unsubscribe?.();
      remoteQueue = [];
    }
  }

  /**
   * Waits for a notify after `seen` (at once if one came already) or the timeout (0: none);
   * true when notified.
   */
  #waitFor(ch: RunChannel, timeoutMs: number, signal?: AbortSignal, seen?: number): Promise<boolean> {
    if (seen !== undefined && ch.version !== seen) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (woken: boolean) => {
        ch.waiters.delete(done);
        signal?.removeEventListener("abort", done);
        if (timer) clearTimeout(timer);
        resolve(woken);
      };
      const done = () => finish(true);
      ch.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
      if (timeoutMs > 0) timer = setTimeout(() => finish(false), timeoutMs);
    });
  }
  /** Cancels a running run wherever it runs. */
  cancel(runId: string, action: CancelAction): void {
    if (!this.#abortLocal(runId, action)) this.#remote?.publishCancel(runId, action);
  }

  #abortLocal(runId: string, action: CancelAction): boolean {
    const c = this.#aborts.get(runId);
    if (!c) return false;
    c.abort(new RunCancelled(action));
    return true;
  }

  /** Wakes the workers (here unless `remoteOnly`, and on other replicas when `broadcast`). */
  wake(opts: { runId?: string; broadcast?: boolean; remoteOnly?: boolean } = {}): void {
    if (!opts.remoteOnly) this.#emitWake(opts.runId);
    if (opts.broadcast || opts.remoteOnly) this.#remote?.publishWake();
  }

  #emitWake(runId?: string): void {
    for (const fn of this.#wakeListeners) fn(runId);
  }

  onWake(fn: (runId?: string) => void): () => void {
    this.#wakeListeners.add(fn);
    return () => this.#wakeListeners.delete(fn);
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const ch of this.#channels.values()) ch.notify();
    await this.#remote?.close();
  }
}

/** The abort reason of a run another replica took over (its lease here expired). */
export class LeaseLost extends Error {
  constructor() {
    super("The run's lease was lost: another replica runs it now");
    this.name = "LeaseLost";
  }
}

/** The abort reason of a cancelled run. */
export class RunCancelled extends Error {
  readonly action: CancelAction;
  constructor(action: CancelAction) {
    super(`Run cancelled (${action})`);
    this.name = "RunCancelled";
    this.action = action;
  }
}
