/**
 * Deletes expired threads (with their runs, checkpoints, crons and sandbox), store items and
 * the stream logs of runs that ended a retention ago (`AGENTCLI_STREAM_RETENTION_SECONDS`,
 * default 300) on a timer (`AGENTCLI_TTL_SWEEP_SECONDS`, default 60). Every replica sweeps;
 * the thread and item batches lock their rows with `SKIP LOCKED` (../../storage/ttl.ts), so
 * each expired thread is deleted, and its sandbox cleaned up, by one replica only; two
 * replicas deleting the same stream log is harmless (the second finds nothing).
 */
import { agentcliError, EnvInvalid, EnvNotInRange, EnvNotTrueFalse, type ServerLog } from "../../kernel/index.ts";
import type { Storage } from "../../storage/index.ts";
import { DEFAULT_TRACE_RETENTION_SECONDS } from "../tracing/local-traces.ts";

export interface TtlSettings {
  /** Minutes after its last update a thread without its own `ttl` is deleted (`AGENTCLI_THREAD_TTL_MINUTES`; none when absent). */
  threadTtlMinutes: number | null;
  /** Minutes after its last write a store item without its own `ttl` is deleted (`AGENTCLI_STORE_TTL_MINUTES`; none when absent). */
  storeTtlMinutes: number | null;
  /** Whether API reads refresh an item's TTL unless they say `refresh_ttl: false` (`AGENTCLI_STORE_TTL_REFRESH_ON_READ`, default true). */
  refreshOnRead: boolean;
  /** Milliseconds between sweeps (`AGENTCLI_TTL_SWEEP_SECONDS`, default 60 s). */
  sweepMs: number;
  /**
   * Seconds a run's stream log is kept after the run ended, to join or resume its stream
   * (`AGENTCLI_STREAM_RETENTION_SECONDS`, default 300; 0: deleted at the next sweep).
   */
  streamRetentionSeconds: number;
  /** Seconds runs' traces are kept (`AGENTCLI_TRACE_RETENTION_SECONDS`, default 7 days; 0: no traces kept). */
  traceRetentionSeconds: number;
}

/** The default of {@link TtlSettings.streamRetentionSeconds}: 5 minutes (LangGraph's resumable streams: 2). */
export const DEFAULT_STREAM_RETENTION_SECONDS = 300;

export const DEFAULT_TTL: TtlSettings = {
  threadTtlMinutes: null,
  storeTtlMinutes: null,
  refreshOnRead: true,
  sweepMs: 60_000,
  streamRetentionSeconds: DEFAULT_STREAM_RETENTION_SECONDS,
  traceRetentionSeconds: DEFAULT_TRACE_RETENTION_SECONDS,
};

/** A whole number of seconds from the environment, in a range, or the default when unset. */
function seconds(
  env: Record<string, string | undefined>,
  o: { name: string; fallback: number; min: number; max: number; fix: string },
): number {
  const raw = env[o.name]?.trim();
  const n = raw ? Number(raw) : o.fallback;
  if (!Number.isInteger(n) || n < o.min || n > o.max) {
    throw agentcliError(EnvNotInRange, { name: o.name, value: raw ?? "", min: o.min, max: o.max, fix: o.fix });
  }
  return n;
}

function minutes(env: Record<string, string | undefined>, name: string, what: string): number | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 525_600) {
    throw agentcliError(EnvInvalid, {
      action: "start the server",
      name,
      value: raw,
      problem: "is not a number of minutes from 1 to 525600",
      fix: `Set ${name} to the minutes after which ${what}, or leave it unset (no expiry).`,
    });
  }
  return n;
}

/** TTL settings from the environment. */
export function ttlFromEnv(env: Record<string, string | undefined>): TtlSettings {
  const refresh = env.AGENTCLI_STORE_TTL_REFRESH_ON_READ?.trim().toLowerCase() ?? "";
  if (refresh && !["true", "false", "1", "0"].includes(refresh)) {
    throw agentcliError(EnvNotTrueFalse, {
      name: "AGENTCLI_STORE_TTL_REFRESH_ON_READ",
      value: env.AGENTCLI_STORE_TTL_REFRESH_ON_READ ?? "",
      fix: "Set it to false to keep reads from extending store items' TTL (default true).",
    });
  }
  const sweep = seconds(env, {
    name: "AGENTCLI_TTL_SWEEP_SECONDS",
    fallback: 60,
    min: 1,
    max: 86_400,
    fix: "Set it to the seconds between sweeps of expired threads and store items, or leave it unset (60).",
  });
  const streamRetentionSeconds = seconds(env, {
    name: "AGENTCLI_STREAM_RETENTION_SECONDS",
    fallback: DEFAULT_STREAM_RETENTION_SECONDS,
    min: 0,
    max: 31_536_000,
    fix:
      `Set it to the seconds a run's stream log is kept after the run ended, or leave it unset (${DEFAULT_STREAM_RETENTION_SECONDS}).`,
  });
  return {
    traceRetentionSeconds: traceRetention(env),
    threadTtlMinutes: minutes(env, "AGENTCLI_THREAD_TTL_MINUTES", "an idle thread is deleted"),
    storeTtlMinutes: minutes(env, "AGENTCLI_STORE_TTL_MINUTES", "an unchanged store item is deleted"),
    refreshOnRead: !(refresh === "false" || refresh === "0"),
    sweepMs: sweep * 1000,
    streamRetentionSeconds,
  };
}

/** `AGENTCLI_TRACE_RETENTION_SECONDS`: seconds runs' traces are kept (0: none recorded). */
function traceRetention(env: Record<string, string | undefined>): number {
  return seconds(env, {
    name: "AGENTCLI_TRACE_RETENTION_SECONDS",
    fallback: DEFAULT_TRACE_RETENTION_SECONDS,
    min: 0,
    max: 315_360_000,
    fix: "Set it to the seconds runs' traces are kept (0 keeps none), or leave it unset (604800, 7 days).",
  });
}

/** What the sweeper works with: storage, the log, and who cleans up what a deleted thread had outside the database. */
export interface TtlSweeperOptions {
  storage: Storage;
  log: ServerLog;
  /** Cleans up what lives outside the database for a deleted thread (its sandbox). */
  onThreadDeleted?: (threadId: string) => Promise<void>;
}

/** The periodic sweep of expired threads and store items. */
export class TtlSweeper {
  readonly settings: TtlSettings;
  readonly #o: TtlSweeperOptions;
  #timer: ReturnType<typeof setInterval> | null = null;
  #running: Promise<unknown> | null = null;

  constructor(o: TtlSweeperOptions, settings: TtlSettings) {
    this.#o = o;
    this.settings = settings;
  }

  start(): void {
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.sweep().catch((err) =>
        this.#o.log.error("cannot sweep expired threads and store items", err)
      ).finally(() => (this.#running = null));
    }, this.settings.sweepMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /**
   * Deletes what has expired now; resolves the deleted threads' ids, the number of items and
   * the number of runs whose stream log was deleted.
   */
  async sweep(): Promise<{ threads: string[]; items: number; streams: number }> {
    const { storage, log } = this.#o;
    const threads: string[] = [];
    while (true) {
      const batch = await storage.ttl.sweepThreads(this.settings.threadTtlMinutes);
      for (const id of batch) {
        await storage.checkpointer.deleteThread(id);
        await this.#o.onThreadDeleted?.(id).catch((err) =>
          log.warn(`expired thread "${id}" was deleted, but not everything of it: ${(err as Error).message}`)
        );
      }
      threads.push(...batch);
      if (batch.length < 100) break;
    }
    let items = 0;
    while (true) {
      const n = await storage.ttl.sweepItems(this.settings.storeTtlMinutes);
      items += n;
      if (n < 1000) break;
    }
    if (threads.length || items) {
      log.info(`deleted ${threads.length} expired thread(s) and ${items} expired store item(s)`);
    }
    // Routine (every run's log expires): not logged.
    let streams = 0;
    while (true) {
      const n = await storage.ttl.sweepRunEvents(this.settings.streamRetentionSeconds);
      streams += n;
      if (n < 500) break;
    }
    await this.#sweepTraces();
    return { threads, items, streams };
  }

  /** Runs' traces older than their retention (with traces off, any left from before). */
  async #sweepTraces(): Promise<void> {
    while ((await this.#o.storage.spans.sweep(this.settings.traceRetentionSeconds)) >= 5000);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#running;
  }
}
