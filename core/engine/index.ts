/**
 * The public face of core/engine/: what the other layers, bin/ and plugins/ import from it.
 * Written by issue 32's step 1 from the imports of the day; later steps point those imports here.
 * Layer order (docs/architecture.md): kernel -> config, bundle, auth, storage -> harness, engine -> server, platform -> testing -> cli.
 */
export { RunBroker } from "./broker/broker.ts";
export type { RemoteBus, RunEnd } from "./broker/broker.ts";
export { checkSchedule } from "./crons/schedule.ts";
export { CronScheduler, nextRunDate } from "./crons/scheduler.ts";
export type { CronSchedulerOptions } from "./crons/scheduler.ts";
export { graphError } from "./executor/executor.ts";
export { GraphRegistry, keepsChatMessages } from "./executor/graphs.ts";
export type { CompiledGraph, GraphLoaders } from "./executor/graphs.ts";
export { toWire } from "./executor/serialize.ts";
export { interruptsByTask, stateToWire } from "./executor/state.ts";
export { STREAM_MODES } from "./executor/stream-modes.ts";
export type { IdleCollector } from "./queue/idle-gc.ts";
export type { ServerRole } from "./queue/roles.ts";
export { DEFAULT_TTL, ttlFromEnv, TtlSweeper } from "./queue/ttl-sweeper.ts";
export type { TtlSettings, TtlSweeperOptions } from "./queue/ttl-sweeper.ts";
export { DEFAULT_QUEUE_AFFINITY_SECONDS, WorkerPool } from "./queue/worker.ts";
export { checkMessages, describeBound, RUN_LIMIT_SETTINGS, tooLarge, tooManyRuns } from "./runs/admission.ts";
export type { LimitSetting, MessagesCheck, RunLimits } from "./runs/admission.ts";
export { resolveAssistant } from "./runs/create.ts";
export type { CreateRunRequest, RunTargets } from "./runs/create.ts";
export { RunService } from "./runs/service.ts";
export type { InputCheck, RunFollowOptions, RunServiceOptions } from "./runs/service.ts";
export { ownedMetadata, ownerOf, patchMetadata, userNamespace } from "./runs/scope.ts";
export { DEFAULT_WEBHOOKS, isHttpUrl, WebhookSender, webhooksFromEnv } from "./runs/webhooks.ts";
export type { Resolver, WebhookSettings } from "./runs/webhooks.ts";
export type { RunTracer } from "./tracing/tracing.ts";
export { DEFAULT_TRACE_RETENTION_SECONDS, LocalTraces } from "./tracing/local-traces.ts";
export { type TokenUsage, usageOf } from "./usage/usage-of.ts";
export type { CheckpointRef, RunConfigInput, RunCreateBody } from "./runs/input.ts";
export { openPostgresBus } from "./broker/pg-bus.ts";
export { openRedisBus } from "./broker/redis-bus.ts";
export { graphExportKind } from "./executor/graphs.ts";
export { idleCollector } from "./queue/idle-gc.ts";
export { roleSetting, workersSetting } from "./queue/roles.ts";
export { runTracerFromEnv } from "./tracing/tracing.ts";
export { UsageMeter, UsageStop } from "./usage/meter.ts";
export type { MeteredRun, RunUsage, UsageMeterOptions } from "./usage/meter.ts";
export {
  ANONYMOUS_USAGE_LIMITS,
  NO_USAGE_LIMITS,
  USAGE_LIMIT_SETTINGS,
  usageLimitsFromEnv,
  usageSubject,
} from "./usage/limits.ts";
export type { RequestClient, UsageLimits, UsageLimitSetting, UsageSubject } from "./usage/limits.ts";
export { Prices, pricesFromEnv } from "./usage/prices.ts";
