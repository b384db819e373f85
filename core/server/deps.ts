/**
 * What the route groups share: storage, the run service, the run broker, the graphs, the
 * workers, the log. The app (./app.ts) builds it once; routes create, cancel and follow runs
 * through `runs` (the engine's run service).
 */
import type { Storage } from "../storage/index.ts";
import type { GraphRegistry, RunBroker, RunService, TtlSettings, WebhookSender, WorkerPool } from "../engine/index.ts";
import type { ServerLimits } from "./http/limits.ts";
import type { ServerLog } from "../kernel/index.ts";

export { resolveAssistant } from "../engine/index.ts";

export interface ServerDeps {
  storage: Storage;
  /** Creates, cancels and follows runs (admission inside). */
  runs: RunService;
  broker: RunBroker;
  graphs: GraphRegistry;
  workers: WorkerPool;
  log: ServerLog;
  /** Cleans up what lives outside the database for a deleted thread (its sandbox). */
  onThreadDeleted?: (threadId: string) => Promise<void>;
  limits: ServerLimits;
  /** Milliseconds between keep-alive comments on an idle SSE stream (0: none). */
  heartbeatMs: number;
  /** Checks and sends run webhooks. */
  webhooks: WebhookSender;
  /** Default TTLs of threads and store items, and whether reads refresh them. */
  ttl: TtlSettings;
}
