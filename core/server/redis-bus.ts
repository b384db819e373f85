/**
 * The cross-replica {@link RemoteBus} over Redis pub/sub (ioredis): run events and ends are
 * published on `agentcli:run:<id>`, cancellations on `agentcli:cancel`, worker wake-ups on
 * `agentcli:wake`. Durable state stays in PostgreSQL; Redis only carries signals.
 */
import type { RemoteBus, RunEnd, CancelAction } from "./broker.ts";
import type { RunEvent } from "../storage/run-events.ts";
import type { ServerLog } from "./log.ts";

/** Connects to Redis and returns the bus. */
export async function openRedisBus(url: string, log: ServerLog): Promise<RemoteBus> {
  const { Redis } = await import("ioredis");
  const pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  const sub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  pub.on("error", (e: Error) => log.warn(`redis: ${e.message}`));
  sub.on("error", (e: Error) => log.warn(`redis: ${e.message}`));
  await Promise.all([pub.connect(), sub.connect()]);
  const runListeners = new Map<string, { fns: Set<(m: RunEvent | { end: RunEnd }) => void>; ready: Promise<void> }>();
  const cancelListeners: Array<(runId: string, action: CancelAction) => void> = [];
  const wakeListeners: Array<() => void> = [];
  await sub.subscribe("agentcli:cancel", "agentcli:wake");
  sub.on("message", (channel: string, message: string) => {
    try {
      if (channel === "agentcli:wake") for (const fn of wakeListeners) fn();
      else if (channel === "agentcli:cancel") {
        const { runId, action } = JSON.parse(message) as { runId: string; action: CancelAction };
        for (const fn of cancelListeners) fn(runId, action);
      } else if (channel.startsWith("agentcli:run:")) {
        const m = JSON.parse(message) as RunEvent | { end: RunEnd };
        for (const fn of runListeners.get(channel.slice("agentcli:run:".length))?.fns ?? []) fn(m);
      }
    } catch (err) {
      log.warn(`redis: bad message on ${channel}: ${(err as Error).message}`);
    }
  });
  return {
    publishEvent: (runId, event) => void pub.publish(`agentcli:run:${runId}`, JSON.stringify(event)).catch(() => {}),
    async subscribeRun(runId, onMessage) {
      let entry = runListeners.get(runId);
      if (!entry) {
        entry = { fns: new Set(), ready: sub.subscribe(`agentcli:run:${runId}`).then(() => {}) };
        runListeners.set(runId, entry);
      }
      const e = entry;
      e.fns.add(onMessage);
      const unsubscribe = () => {
        e.fns.delete(onMessage);
        if (e.fns.size === 0 && runListeners.get(runId) === e) {
          runListeners.delete(runId);
          void sub.unsubscribe(`agentcli:run:${runId}`).catch(() => {});
        }
      };
      try {
        await e.ready;
      } catch (err) {
        unsubscribe();
        throw err;
      }
      return unsubscribe;
    },
    publishCancel: (runId, action) => void pub.publish("agentcli:cancel", JSON.stringify({ runId, action })).catch(() => {}),
    onCancel: (fn) => void cancelListeners.push(fn),
    publishWake: () => void pub.publish("agentcli:wake", "1").catch(() => {}),
    onWake: (fn) => void wakeListeners.push(fn),
    async close() {
      sub.disconnect();
      pub.disconnect();
    },
  };
}
