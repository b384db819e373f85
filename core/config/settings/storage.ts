/** The settings of docs/configuration.md's section Storage, queue and replicas. */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("storage");

export const STORAGE_SETTINGS: readonly Setting[] = [
  setting(
    "DATABASE_URL",
    "unset (embedded PGlite)",
    "A PostgreSQL for `serve`/`dev` (threads, runs, store, checkpoints); replicas sharing it form one server.",
  ),
  setting(
    "REDIS_URL",
    "unset",
    "Redis for run-queue wake-ups, cross-replica streaming and cancellation (optional beside PostgreSQL).",
  ),
  setting(
    "AGENTCLI_CONNECT_TIMEOUT_SECONDS",
    "30",
    "At start, how long an unreachable PostgreSQL or Redis is retried before the server exits 1.",
  ),
  setting(
    "AGENTCLI_DB_RETRY_SECONDS",
    "60",
    "Once running, how long background work retries a statement while PostgreSQL is unreachable.",
  ),
  setting(
    "AGENTCLI_PG_PREPARED_STATEMENTS",
    "1",
    "`0` stops preparing statements by name (for PgBouncer before 1.21 in transaction mode).",
  ),
  setting(
    "AGENTCLI_RUN_LEASE_SECONDS",
    "10",
    "A worker's lease on a run it executes (renewed every third); a dead replica's runs are taken over after it.",
  ),
  setting(
    "AGENTCLI_QUEUE_AFFINITY_SECONDS",
    "0.3",
    "How long a run queued on a busy replica is kept for that replica's workers (0: none).",
  ),
];
