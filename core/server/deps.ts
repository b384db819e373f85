/**
 * What the route groups share: storage, the run broker, the graphs, the workers, the log.
 */
import type { Storage } from "../storage/storage.ts";
import type { Assistant } from "../storage/records.ts";
import type { RunBroker } from "./broker.ts";
import type { GraphRegistry } from "./graphs.ts";
import { notFound } from "./http-errors.ts";
import type { ServerLog } from "./log.ts";
import type { WorkerPool } from "./worker.ts";

export interface ServerDeps {
  storage: Storage;
  broker: RunBroker;
  graphs: GraphRegistry;
  workers: WorkerPool;
  log: ServerLog;
}

/**
 * Finds an assistant by id, or the server's default assistant of a graph id or name
 * (`assistant_id: "agent"` works as in LangGraph Platform).
 */
export async function resolveAssistant(deps: ServerDeps, id: string): Promise<Assistant> {
  const a = await deps.storage.assistants.resolve(id);
  if (!a) throw notFound("Assistant", id);
  return a;
}
