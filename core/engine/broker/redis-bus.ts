/**
 * The cross-replica {@link RemoteBus} over Redis pub/sub (ioredis): run events and ends are
 * published on `agentcli:run:<id>`, cancellations on `agentcli:cancel`, worker wake-ups on
 * `agentcli:wake`, followers of runs another replica runs on `agentcli:follow`. Durable state stays in PostgreSQL; Redis only carries signals.
 */
import { type BusMessage, BusSubscriptions, newSender, type RemoteBus, signalBody, signalPayload } from "./bus.ts";
import type { CancelAction } from "./cancellation.ts";
import type { ServerLog } from "../../kernel/index.ts";

/**
 * Connects to Redis and returns the bus. At start, an unreachable Redis is retried for
 * `connectWithinMs` (default: one attempt), then a SERVICE_UNREACHABLE error naming
 * `REDIS_URL`; once connected, a lost connection is re-established without end.
 */
export async function openRedisBus(
  url: string,
  log: ServerLog,
  opts: { connectWithinMs?: number } = {},
): Promise<RemoteBus> {
  const [{ Redis }, { connectWithin }] = await Promise.all([import("ioredis"), import("../../storage/index.ts")]);
  const open = (timeoutMs: number) => {
    let connected = false;
    const c = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 3,
      connectTimeout: timeoutMs || 10_000,
      // Not reconnecting before the first connection: connectWithin retries (and gives up).
      retryStrategy: (times: number) => (connected ? Math.min(times * 50, 2000) : null),
    });
    let failure: Error | null = null;
    c.on("error", (e: Error) => (connected ? log.warn(`redis: ${e.message}`) : (failure = e)));
    // The connect promise only says "Connection is closed."; the error event says why.
    return {
      c,
      ready: c.connect().then(() => void (connected = true), (err: Error) => Promise.reject(failure ?? err)),
    };
  };
  const [pub, sub] = await connectWithin({
    service: "Redis",
    variable: "REDIS_URL",
    url,
    withinMs: opts.connectWithinMs ?? 0,
  }, async (timeoutMs) => {
    const both = [open(timeoutMs), open(timeoutMs)];
    try {
      await Promise.all(both.map((b) => b.ready));
    } catch (err) {
      for (const b of both) b.c.disconnect();
      throw err;
    }
    return both.map((b) => b.c);
  }) as [InstanceType<typeof Redis>, InstanceType<typeof Redis>];
  const runs = new BusSubscriptions((channel) => sub.subscribe(channel), (channel) => sub.unsubscribe(channel));
  const cancelListeners: Array<(runId: string, action: CancelAction) => void> = [];
  const wakeListeners: Array<() => void> = [];
  const followListeners: Array<(runId: string) => void> = [];
  /** Wake-ups and follows this bus sent come back to it: skipped (see signalPayload). */
  const self = newSender();
  await sub.subscribe("agentcli:cancel", "agentcli:wake", "agentcli:follow");
  sub.on("message", (channel: string, message: string) => {
    try {
      if (channel === "agentcli:wake") {
        if (signalBody(self, message) !== null) { for (const fn of wakeListeners) fn(); }
      } else if (channel === "agentcli:follow") {
        const runId = signalBody(self, message);
        if (runId !== null) { for (const fn of followListeners) fn(runId); }
      } else if (channel === "agentcli:cancel") {
        const { runId, action } = JSON.parse(message) as { runId: string; action: CancelAction };
        for (const fn of cancelListeners) fn(runId, action);
      } else runs.deliver(channel, () => JSON.parse(message) as BusMessage);
    } catch (err) {
      log.warn(`redis: bad message on ${channel}: ${(err as Error).message}`);
    }
  });
  return {
    publishEvent: (runId, event) => void pub.publish(`agentcli:run:${runId}`, JSON.stringify(event)).catch(() => {}),
    subscribeRun: (runId, onMessage) => runs.subscribe(`agentcli:run:${runId}`, onMessage),
    publishCancel: (runId, action) =>
      void pub.publish("agentcli:cancel", JSON.stringify({ runId, action })).catch(() => {}),
    onCancel: (fn) => void cancelListeners.push(fn),
    publishWake: () => void pub.publish("agentcli:wake", signalPayload(self, "1")).catch(() => {}),
    onWake: (fn) => void wakeListeners.push(fn),
    publishFollow: (runId) => void pub.publish("agentcli:follow", signalPayload(self, runId)).catch(() => {}),
    onFollow: (fn) => void followListeners.push(fn),
    async close() {
      sub.disconnect();
      pub.disconnect();
    },
  };
}
