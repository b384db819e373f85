/**
 * What the route groups share: storage, the run broker, the graphs, the workers, the log.
 */
import type { Assistant, AssistantScope, Storage } from "../storage/index.ts";
import type { GraphRegistry, RunBroker, TtlSettings, WebhookSender, WorkerPool } from "../engine/index.ts";
import { notFound } from "./http/errors.ts";
import type { ServerLimits } from "./http/limits.ts";
import type { ServerLog } from "../kernel/index.ts";

export interface ServerDeps {
  storage: Storage;
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

/**
 * Finds an assistant by id, or the server's default assistant of a graph id or name
 * (`assistant_id: "agent"` works as in LangGraph Platform), among those `scope` sees: another
 * user's assistant is the same 404 as an unknown one.
 */
export async function resolveAssistant(
  deps: ServerDeps,
  id: string,
  scope: AssistantScope | undefined,
): Promise<Assistant> {
  const a = await deps.storage.assistants.resolve(id, scope);
  if (!a) throw notFound("Assistant", id);
  return a;
}
