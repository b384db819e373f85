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
  const runListeners = new Map<string, Set<(m: RunEvent | { end: RunEnd }) => void>>();
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
        for (const fn of runListeners.get(channel.slice("agentcli:run:".length)) ?? []) fn(m);
      }
    } catch (err) {
      log.warn(`redis: bad message on ${channel}: ${(err as Error).message}`);
    }
  });
  return {
    publishEvent: (runId, event) => void pub.publish(`agentcli:run:${runId}`, JSON.stringify(event)).catch(() => {}),
    subscribeRun(runId, onMessage) {
      let set = runListeners.get(runId);
      if (!set) {
        set = new Set();
        runListeners.set(runId, set);
        void sub.subscribe(`agentcli:run:${runId}`).catch(() => {});
      }
      set.add(onMessage);
      return () => {
        set!.delete(onMessage);
        if (set!.size === 0) {
          runListeners.delete(runId);
          void sub.unsubscribe(`agentcli:run:${runId}`).catch(() => {});
        }
      };
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
