/**
 * Channel values as `checkpoint_blobs` rows: a list that only grew since the version last
 * stored or read for its channel (messages) is stored as the items appended, on top of that
 * version, so a conversation's storage grows with its length, not with its square. The saver
 * remembers the last list of each (thread, namespace, channel) for this.
 */
import type { CheckpointCodec } from "./codec.ts";

/** Appended versions on top of a whole one before a list is stored whole again (bounds a read). */
export const MAX_CHAIN = 100;
/** Lists remembered per (thread, namespace, channel), for appends; the oldest go first. */
const MAX_REMEMBERED = 256;

/** The last stored or read value of a list channel: what the next version may append to. */
export interface Remembered {
  version: string;
  /** A copy of the list (its items are the graph's own objects). */
  items: unknown[];
  /** Appended versions between this one and a whole one. */
  depth: number;
}

/** One channel version to store: the checkpoint's values, and whether `channel` has one. */
export interface ChannelVersion {
  threadId: string;
  ns: string;
  channel: string;
  version: string;
  values: Record<string, unknown>;
  has: boolean;
}

/** The lists remembered per (thread, namespace, channel), the oldest dropped first. */
export class RememberedLists {
  #lists = new Map<string, Remembered>();

  get(key: string): Remembered | undefined {
    return this.#lists.get(key);
  }

  remember(key: string, entry: Remembered): void {
    this.#lists.delete(key);
    this.#lists.set(key, entry);
    if (this.#lists.size > MAX_REMEMBERED) this.#lists.delete(this.#lists.keys().next().value!);
  }

  forget(threadId: string): void {
    const prefix = JSON.stringify([threadId]).slice(0, -1) + ",";
    for (const key of [...this.#lists.keys()]) if (key.startsWith(prefix)) this.#lists.delete(key);
  }
}

/**
 * The `checkpoint_blobs` row of one channel version: "empty" without a value; the items
 * appended, when the value is a list that extends the one last stored or read for this
 * channel (the same item objects, in order: reducers append new objects and never change
 * a stored one in place); else the whole value.
 */
export async function blobRow(
  codec: CheckpointCodec,
  lists: RememberedLists,
  of: ChannelVersion,
): Promise<unknown[]> {
  const { threadId, ns, channel, version } = of;
  if (!of.has) return [threadId, ns, channel, version, "empty", null, null];
  const value = of.values[channel];
  if (Array.isArray(value)) {
    const key = JSON.stringify([threadId, ns, channel]);
    const prev = lists.get(key);
    const appended = prev && prev.version !== version && prev.depth < MAX_CHAIN &&
      value.length >= prev.items.length &&
      prev.items.every((item, i) => value[i] === item);
    lists.remember(key, { version, items: value.slice(), depth: appended ? prev.depth + 1 : 0 });
    if (appended) {
      const [t, b] = await codec.dump(value.slice(prev.items.length));
      return [threadId, ns, channel, version, t, b, prev.version];
    }
  }
  const [t, b] = await codec.dump(value);
  return [threadId, ns, channel, version, t, b, null];
}
