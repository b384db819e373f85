/**
 * The public face of core/storage/: what the other layers, bin/ and plugins/ import from it.
 * Written by issue 32's step 1 from the imports of the day; later steps point those imports here.
 * Layer order (docs/architecture.md): kernel -> config, bundle, auth, storage -> harness, engine -> server, platform -> testing -> cli.
 */
export { currentCheck, isSystemAssistant } from "./assistants.ts";
export type { AssistantScope } from "./assistants.ts";
export { DEFAULT_CONNECT_TIMEOUT_SECONDS } from "./connect.ts";
export { cronToWire } from "./crons.ts";
export type { CronPatch, CronRecord } from "./crons.ts";
export {
  DB_RETRY_AFTER_SECONDS,
  DEFAULT_DB_RETRY_SECONDS,
  isTransientDbError,
  REQUEST_RETRY_MS,
  withBackgroundRetry,
  withDbRetryBudget,
} from "./db-retry.ts";
export { AtRestEncryption } from "./encryption.ts";
export { lockHolder, processAlive } from "./lock.ts";
export { SERVER_MIGRATIONS, SERVER_TEMPLATE } from "./migrations.ts";
export type { Assistant, Json, Run, RunStatus, Scope, Thread, ThreadStatus } from "./records.ts";
export type { RunEvent, RunEventLog } from "./run-events.ts";
export type { MessageRefs, RunSpanStore, Span, SpanUsage, StoredSpan, StoredTrace } from "./run-spans.ts";
export { DEFAULT_QUEUE_AFFINITY_SECONDS, DEFAULT_RUN_LEASE_SECONDS, MAX_RUN_ATTEMPTS } from "./runs.ts";
export type { ClaimedRun, TakenRun } from "./runs.ts";
export { migrate, openSql } from "./sql.ts";
export type { Migration, SqlDriver, SqlExecutor } from "./sql.ts";
export { openStorage } from "./storage.ts";
export type { Storage, StorageOptions, StorageTx } from "./storage.ts";
export { SandboxRecords } from "./sandboxes.ts";
export type { SandboxRecord } from "./sandboxes.ts";
export type { StoreIndex } from "./store-index.ts";
export type { TtlStore } from "./ttl.ts";
export type { DeferredUsage, UsageCall, UsageCounter, UsageGroup, UsageStore, UsageTotals } from "./usage.ts";
export { connectWithin } from "./connect.ts";
export { encryptionFromEnv } from "./encryption.ts";
export { DataDirLockedError } from "./lock.ts";
export { prepareDataDir } from "./template.ts";
