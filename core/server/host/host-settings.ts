/**
 * The host's settings from the environment (`AGENTCLI_*`, `DATABASE_URL`), read by ./agent-host.ts:
 * those read before anything opens (a bad value stops the start first), storage's and the server's.
 */
import type { Env } from "../../kernel/index.ts";
import { secondsSetting, switchSetting } from "../../config/index.ts";
import { ttlFromEnv, webhooksFromEnv } from "../../engine/index.ts";
import {
  DEFAULT_CONNECT_TIMEOUT_SECONDS,
  DEFAULT_DB_RETRY_SECONDS,
  DEFAULT_QUEUE_AFFINITY_SECONDS,
  DEFAULT_RUN_LEASE_SECONDS,
  type StorageOptions,
} from "../../storage/index.ts";
import { corsFromEnv } from "../http/cors.ts";
import type { AgentServerOptions } from "../app.ts";
import type { HostOptions } from "./agent-host.ts";

/** Default limit of one run's execution time (as LangGraph's servers: an hour). */
export const DEFAULT_RUN_TIMEOUT_SECONDS = 3600;

/** `AGENTCLI_RUN_TIMEOUT_SECONDS`: seconds a run may execute before it ends `timeout` (0: no limit). */
export function runTimeoutSeconds(env: Env): number {
  return secondsSetting(env, "AGENTCLI_RUN_TIMEOUT_SECONDS", {
    default: DEFAULT_RUN_TIMEOUT_SECONDS,
    meaning: "a run may execute (0 for no limit)",
  });
}

/**
 * `AGENTCLI_CONNECT_TIMEOUT_SECONDS`: how long the start-up keeps trying to reach PostgreSQL
 * and Redis before it fails.
 */
export function connectTimeoutSeconds(env: Env): number {
  return secondsSetting(env, "AGENTCLI_CONNECT_TIMEOUT_SECONDS", {
    default: DEFAULT_CONNECT_TIMEOUT_SECONDS,
    meaning: "the start-up keeps trying to reach PostgreSQL and Redis",
  });
}

/** The settings read before anything opens: a bad value stops the start first. */
export async function startSettings(opts: HostOptions) {
  const { roleSetting, workersSetting } = await import("../../engine/index.ts");
  const role = roleSetting(opts.role, opts.env);
  const { listenSettings } = await import("./listen-settings.ts");
  const listen = listenSettings(opts.env, { mode: opts.mode, bind: opts.host });
  const workers = workersSetting(opts.workers, opts.env, role);
  const shutdownMs = secondsSetting(opts.env, "AGENTCLI_SHUTDOWN_SECONDS", {
    default: 10,
    meaning: "a stopping replica finishes its runs before it hands them back",
  }) * 1000;
  const { sandboxIdleSeconds } = await import("../../harness/index.ts");
  sandboxIdleSeconds(opts.env);
  return { role, listen, workers, shutdownMs };
}

/** Where storage is (`DATABASE_URL`, else the data dir) and how it is reached, encrypted and indexed. */
export async function storageOptions(opts: HostOptions, connectWithinMs: number): Promise<StorageOptions> {
  const encryption = (await import("../../storage/index.ts")).encryptionFromEnv(opts.env);
  const storeIndex = (await import("../../harness/index.ts")).storeIndexFromEnv(opts.env, opts.driver);
  // How long background work waits out a database restart (./storage/db-retry.ts).
  const dbRetryMs = secondsSetting(opts.env, "AGENTCLI_DB_RETRY_SECONDS", {
    default: DEFAULT_DB_RETRY_SECONDS,
    meaning: "work waits for an unreachable PostgreSQL before it fails",
  }) * 1000;
  const pgPrepare = switchSetting(opts.env, "AGENTCLI_PG_PREPARED_STATEMENTS", {
    default: true,
    meaning:
      "statements the server sends again are prepared by name on PostgreSQL (0 behind a pooler that cannot keep them, such as PgBouncer before 1.21 in transaction mode)",
  });
  const url = opts.env.DATABASE_URL;
  return url
    ? {
      url,
      connect: { withinMs: connectWithinMs, variable: "DATABASE_URL" },
      retryMs: dbRetryMs,
      prepare: pgPrepare,
      encryption,
      storeIndex,
      revision: opts.mode === "serve" ? opts.env.AGENTCLI_REVISION_ID?.trim() || null : null,
    }
    : { dataDir: opts.dataDir, encryption, storeIndex };
}

/** The server's settings from the environment, read as the server is created. */
export function serverSettings(env: Env, mode: HostOptions["mode"]): Partial<AgentServerOptions> {
  return {
    runLeaseSeconds: secondsSetting(env, "AGENTCLI_RUN_LEASE_SECONDS", {
      default: DEFAULT_RUN_LEASE_SECONDS,
      meaning: "a run's lease lasts before another replica takes the run over",
    }),
    queueAffinitySeconds: secondsSetting(env, "AGENTCLI_QUEUE_AFFINITY_SECONDS", {
      default: DEFAULT_QUEUE_AFFINITY_SECONDS,
      meaning: "a run queued on a busy replica is kept for its workers before other replicas may take it",
    }),
    cors: corsFromEnv(env, mode),
    webhooks: webhooksFromEnv(env, mode),
    ttl: ttlFromEnv(env),
    heartbeatMs: secondsSetting(env, "AGENTCLI_STREAM_HEARTBEAT_SECONDS", {
      default: 15,
      meaning: "between keep-alive comments on an idle stream (0: none)",
    }) * 1000,
  };
}
