/**
 * The cross-replica {@link RemoteBus} over PostgreSQL `LISTEN/NOTIFY`, for deployments with
 * a PostgreSQL `DATABASE_URL` and no `REDIS_URL`: run events and ends on a channel per run,
 * cancellations, worker wake-ups and followers of runs another replica runs on one channel each. Channels are named after the
 * connection's schema (NOTIFY is database-wide), so deployments sharing a database in
 * separate schemas do not hear each other.
 */
import { createHash } from "node:crypto";
import { Buffer } from "node:buffer";
import { type BusMessage, BusSubscriptions, newSender, type RemoteBus, signalBody, signalPayload } from "./bus.ts";
import type { CancelAction } from "./cancellation.ts";
import type { ServerLog } from "../../kernel/index.ts";
import { isTransientDbError } from "../../storage/index.ts";

/** NOTIFY refuses payloads of 8000 bytes or more: larger events go as a hint to read the log. */
const MAX_PAYLOAD_BYTES = 7900;

type PgClient = import("pg").Client;

/** Connects (a listening and a notifying connection) and returns the bus. */
export async function openPostgresBus(url: string, log: ServerLog): Promise<RemoteBus> {
  const pg = (await import("pg")).default;
  const connect = async (): Promise<PgClient> => {
    const c = new pg.Client({ connectionString: url });
    c.on("error", (e: Error) => log.warn(`postgres bus: ${e.message}`));
    try {
      await c.connect();
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
    return c;
  };
  // Notifying goes through a pool of one connection, which opens a new one after a database restart.
  const notifier = new pg.Pool({ connectionString: url, max: 1 });
  notifier.on("error", (e: Error) => log.warn(`postgres bus: ${e.message}`));
  let listener: PgClient;
  try {
    await notifier.query("SELECT 1");
    listener = await connect();
  } catch (err) {
    await notifier.end().catch(() => {});
    throw err;
  }
  const { rows } = await listener.query<{ s: string | null }>("SELECT current_schema() AS s");
  const ns = `agentcli_${createHash("sha256").update(rows[0]?.s ?? "").digest("hex").slice(0, 8)}`;
  const wakeChannel = `${ns}_wake`;
  const cancelChannel = `${ns}_cancel`;
  const followChannel = `${ns}_follow`;
  const runChannel = (runId: string) =>
    `${ns}_r_${/^[\w-]{1,40}$/.test(runId) ? runId : createHash("sha256").update(runId).digest("hex").slice(0, 40)}`;
  const ident = (channel: string) => `"${channel.replaceAll('"', '""')}"`;

  // While the listening connection is being reopened (a database restart), a new channel is
  // listened to when it is back (reconnect listens to every channel); followers read storage
  // on their safety-net poll meanwhile.
  const listenOrLater = (channel: string) =>
    listener.query(`LISTEN ${ident(channel)}`).catch((err) => {
      if (!isTransientDbError(err)) throw err;
    });
  const runs = new BusSubscriptions(listenOrLater, (channel) => listener.query(`UNLISTEN ${ident(channel)}`));
  const cancelListeners: Array<(runId: string, action: CancelAction) => void> = [];
  const wakeListeners: Array<() => void> = [];
  const followListeners: Array<(runId: string) => void> = [];
  let closed = false;
  /** Wake-ups and follows this bus sent come back to it: skipped (see signalPayload). */
  const self = newSender();

  const onNotification = (n: { channel: string; payload?: string }) => {
    try {
      if (n.channel === wakeChannel) {
        if (signalBody(self, n.payload ?? "") !== null) { for (const fn of wakeListeners) fn(); }
      } else if (n.channel === followChannel) {
        const runId = signalBody(self, n.payload ?? "");
        if (runId !== null) { for (const fn of followListeners) fn(runId); }
      } else if (n.channel === cancelChannel) {
        const { runId, action } = JSON.parse(n.payload ?? "") as { runId: string; action: CancelAction };
        for (const fn of cancelListeners) fn(runId, action);
      } else runs.deliver(n.channel, () => JSON.parse(n.payload ?? "") as BusMessage);
    } catch (err) {
      log.warn(`postgres bus: bad message on ${n.channel}: ${(err as Error).message}`);
    }
  };
  const attach = async (c: PgClient) => {
    c.on("notification", onNotification);
    await c.query(`LISTEN ${ident(wakeChannel)}; LISTEN ${ident(cancelChannel)}; LISTEN ${ident(followChannel)}`);
  };
  await attach(listener);

  // A lost listening connection (database restart) is reopened with every LISTEN it had;
  // followers re-read storage on their safety-net poll for what was said meanwhile.
  const reconnect = async () => {
    for (let delay = 250; !closed; delay = Math.min(delay * 2, 5000)) {
      try {
        const c = await connect();
        await attach(c);
        for (const channel of runs.channels()) await c.query(`LISTEN ${ident(channel)}`);
        c.on("end", () => void (!closed && reconnect()));
        listener = c;
        log.info("postgres bus: listening again");
        return;
      } catch (err) {
        log.warn(`postgres bus: cannot listen again: ${(err as Error).message}; retrying in ${delay} ms`);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
  listener.on("end", () => void (!closed && reconnect()));

  const notify = (channel: string, payload: string) =>
    void notifier.query("SELECT pg_notify($1, $2)", [channel, payload]).catch((e: Error) =>
      log.warn(`postgres bus: cannot notify: ${e.message}`)
    );

  return {
    publishEvent(runId, m) {
      let payload = JSON.stringify(m);
      if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
        // The follower reads the event (or the run's final values) from storage.
        payload = JSON.stringify(
          "end" in m ? { end: { status: m.end.status, output: null } } : { id: m.id, event: m.event },
        );
      }
      notify(runChannel(runId), payload);
    },
    subscribeRun: (runId, onMessage) => runs.subscribe(runChannel(runId), onMessage),
    publishCancel: (runId, action) => notify(cancelChannel, JSON.stringify({ runId, action })),
    onCancel: (fn) => void cancelListeners.push(fn),
    publishWake: () => notify(wakeChannel, signalPayload(self, "1")),
    onWake: (fn) => void wakeListeners.push(fn),
    publishFollow: (runId) => notify(followChannel, signalPayload(self, runId)),
    onFollow: (fn) => void followListeners.push(fn),
    async close() {
      closed = true;
      await Promise.all([listener.end().catch(() => {}), notifier.end().catch(() => {})]);
    },
  };
}
