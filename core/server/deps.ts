/**
 * What the route groups share: storage, the run service, the graphs, the log, the limits.
 * The app (./app.ts) builds it once; routes create, cancel and follow runs through `runs`
 * (the engine's run service).
 */
import type { Storage } from "../storage/index.ts";
import type { GraphRegistry, LocalTraces, RunService, TtlSettings, UsageMeter } from "../engine/index.ts";
import type { ServerLimits } from "./http/limits.ts";
import type { ServerLog } from "../kernel/index.ts";

export { resolveAssistant } from "../engine/index.ts";

export interface ServerDeps {
  storage: Storage;
  /** Creates, cancels and follows runs (admission inside). */
  runs: RunService;
  graphs: GraphRegistry;
  log: ServerLog;
  /** Cleans up what lives outside the database for a deleted thread (its sandbox). */
  onThreadDeleted?: (threadId: string) => Promise<void>;
  limits: ServerLimits;
  /** Milliseconds between keep-alive comments on an idle SSE stream (0: none). */
  heartbeatMs: number;
  /** Default TTLs of threads and store items, and whether reads refresh them. */
  ttl: TtlSettings;
  /** Runs' traces kept locally: the spans of runs in flight on this replica. */
  traces: LocalTraces;
  /** Usage recording and limits (null: usage is not recorded). */
  usage: UsageMeter | null;
}
