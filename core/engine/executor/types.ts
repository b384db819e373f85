/**
 * What the executor works with: its dependencies, a run's request as stored, how a run taken
 * over from another replica goes on, and a claimed run with what its claim already read.
 */
import type { ServerLog } from "../../kernel/index.ts";
import type { ClaimedRun, Json, Run, Storage } from "../../storage/index.ts";
import type { CancelAction, RunBroker } from "../broker/broker.ts";
import type { WebhookSender } from "../runs/webhooks.ts";
import type { LocalTraces } from "../tracing/local-traces.ts";
import type { RunTracer } from "../tracing/tracing.ts";
import type { UsageMeter } from "../usage/meter.ts";
import type { UsageSubject } from "../usage/limits.ts";
import type { GraphRegistry } from "./graphs.ts";
import type { StreamMode } from "./stream-modes.ts";

export interface ExecutorDeps {
  storage: Storage;
  broker: RunBroker;
  graphs: GraphRegistry;
  log: ServerLog;
  /** A run still executing after this long is stopped and ends `timeout` (no limit when absent or 0). */
  runTimeoutMs?: number;
  /** Cleans up what lives outside the database for a thread deleted after its run (its sandbox). */
  onThreadDeleted?: (threadId: string) => Promise<void>;
  /** Sends the result of runs that have a `webhook`. */
  webhooks?: WebhookSender;
  /** Traces runs (OpenTelemetry, ../tracing/tracing.ts) when configured. */
  tracer?: RunTracer | null;
  /** Keeps runs' traces locally (../tracing/local-traces.ts), stored with their end. */
  traces?: LocalTraces | null;
  /** Records runs' model calls and stops a run over a daily budget (../usage/meter.ts); none: nothing recorded. */
  usage?: UsageMeter | null;
}

/** The run's request as stored in `runs.kwargs`. */
export interface RunKwargs {
  input?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown } | null;
  config?: {
    configurable?: Record<string, unknown>;
    tags?: string[];
    recursion_limit?: number;
    run_name?: string;
    max_concurrency?: number;
    [k: string]: unknown;
  };
  context?: unknown;
  stream_mode?: StreamMode[];
  stream_subgraphs?: boolean;
  interrupt_before?: string[] | "*";
  interrupt_after?: string[] | "*";
  checkpoint_id?: string;
  checkpoint?: { checkpoint_id?: string; checkpoint_ns?: string } | null;
  durability?: "sync" | "async" | "exit";
  checkpoint_during?: boolean;
  on_completion?: "delete" | "keep";
  temporary?: boolean;
  strict_resume?: boolean;
  /** Told the run's final result (../runs/webhooks.ts). */
  webhook?: string;
  /** Who the run's usage counts for (../usage/limits.ts), set at its creation. */
  usage_subject?: UsageSubject;
}

/** How a run taken over from a replica that died is executed (see ../queue/worker.ts). */
export interface ResumeOptions {
  /** The run was running on another replica: it continues from its last checkpoint, its stream from its last logged event. */
  resumed?: boolean;
  /** Cancelled while its replica was gone: it ends as a cancel would have ended it. */
  cancelled?: CancelAction;
  /** It cannot resume (too many attempts): it ends `error` with this, its stream with an `error` event. */
  fail?: { error: string; message: string };
}

/**
 * A run to execute, with what its creator already read: its assistant and its thread's
 * metadata (then the executor does not read them again).
 */
export type ExecutableRun = Run & { assistant?: ClaimedRun["assistant"]; threadMetadata?: Json; threadEmpty?: boolean };

/** An error as a run's stream and its `__error__` output show it. */
export interface RunError {
  error: string;
  message: string;
}
