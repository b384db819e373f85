/**
 * The shape of the signals between replicas (a {@link RemoteBus}: Redis pub/sub in
 * ./redis-bus.ts, PostgreSQL LISTEN/NOTIFY in ./pg-bus.ts) and what both buses share: the
 * sender of a broadcast signal, and their subscriptions by channel.
 */
import type { RunEvent } from "../../storage/index.ts";
import type { CancelAction } from "./cancellation.ts";
import type { RunEnd } from "./channel.ts";

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
  /** Says that a replica follows a run it does not run (see ./follow.ts). */
  publishFollow(runId: string): void;
  onFollow(fn: (runId: string) => void): void;
  close(): Promise<void>;
}

/** What a bus carries on a run's channel: an event, or the run's end. */
export type BusMessage = RunEvent | { end: RunEnd };

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
