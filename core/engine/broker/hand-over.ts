/**
 * A run moving between replicas: taken over here from a replica that died (its stream goes
 * on after what that replica logged), or handed over from here to the replica that took it
 * (this one stops executing it without ending it).
 */
import type { RunEvent } from "../../storage/index.ts";
import type { RemoteBus } from "./bus.ts";
import type { RunChannel } from "./channel.ts";
import type { EventLogWriter } from "./event-log.ts";

/**
 * Ids a run taken over from a dead replica skips before its next event: more than that
 * replica can have published without logging (it logs every FLUSH_MS, ./event-log.ts, while
 * another replica follows the run: only such followers can have seen events it did not log).
 */
const RESUME_ID_GAP = 1000;

/** Fills the channel of a run taken over with `prior`, its logged events; its own ids start past a gap. */
export function resumeAfter(ch: RunChannel, prior: readonly RunEvent[]): void {
  // The dead replica may have published events it never logged (followers elsewhere saw
  // them over the bus): this replica's ids start past a gap, so none is taken twice. In
  // memory, the ids not logged are placeholders followers skip.
  const next = (prior.at(-1)?.id ?? 0) + RESUME_ID_GAP;
  const byId = new Map(prior.map((e) => [e.id, e]));
  ch.events.length = 0;
  for (let id = 1; id < next; id++) ch.events.push(byId.get(id) ?? { id, event: "", data: "" });
  ch.end = null;
}

/**
 * The run no longer executes here: what was not logged yet is dropped (the new holder's
 * events take those ids); followers here go on from the log and the bus.
 */
export async function handOverChannel(
  opts: { runId: string; ch: RunChannel; log: EventLogWriter; remote: RemoteBus | null },
): Promise<void> {
  const { runId, ch } = opts;
  await opts.log.take(ch);
  ch.local = false;
  // Its followers here now follow it on the replica that took it over.
  if (ch.waiters.size) opts.remote?.publishFollow(runId);
  ch.notify();
}
