/**
 * What a run is created from (`POST /threads/{id}/runs`, `/runs/stream`, `/runs/wait`, a
 * cron's firing, the A2A and MCP turns): the run service's input. The server parses request
 * bodies into it (core/server/http/schemas.ts `runCreate`, checked there to give exactly this
 * type); `null` fields arrive as absent.
 */
import type { StreamMode } from "../executor/stream-modes.ts";

/** A checkpoint named by a request (`checkpoint`, or `before` of history). */
export interface CheckpointRef {
  checkpoint_id?: string;
  checkpoint_ns?: string;
  thread_id?: string;
  [key: string]: unknown;
}

/** A run's `config`: LangGraph's RunnableConfig fields the server reads; others pass through. */
export interface RunConfigInput {
  tags?: string[];
  recursion_limit?: number;
  run_name?: string;
  max_concurrency?: number;
  configurable?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A run's request, parsed. */
export interface RunCreateBody {
  assistant_id: string;
  /** The graph's state update, or null/absent (resume, or nothing new). */
  input?: Record<string, unknown> | null;
  command?: { resume?: unknown; update?: unknown; goto?: unknown };
  config?: RunConfigInput;
  context?: unknown;
  metadata?: Record<string, unknown>;
  stream_mode?: StreamMode[];
  stream_subgraphs?: boolean;
  stream_resumable?: boolean;
  /** Refused by the parser unless absent (LangSmith). */
  feedback_keys?: undefined;
  interrupt_before?: "*" | string[];
  interrupt_after?: "*" | string[];
  checkpoint?: CheckpointRef;
  checkpoint_id?: string;
  checkpoint_during?: boolean;
  durability?: "sync" | "async" | "exit";
  /** An http(s) URL told of the run's end. */
  webhook?: string;
  strict_resume?: boolean;
  multitask_strategy?: "reject" | "interrupt" | "rollback" | "enqueue";
  on_completion?: "delete" | "keep";
  on_disconnect?: "cancel" | "continue";
  /** Seconds to wait before the run starts (at most 30 days). */
  after_seconds?: number;
  if_not_exists?: "create" | "reject";
  /** Refused by the parser unless absent (LangSmith). */
  langsmith_tracer?: undefined;
}
