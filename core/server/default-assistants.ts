/**
 * The default assistants a server creates for its graphs (one per graph, id the uuid v5 of
 * its name), and the route groups a LangGraph.js project may switch off.
 */
import type { Storage } from "../storage/index.ts";
import { uuid5 } from "./http/uuid5.ts";

export interface DefaultAssistant {
  name: string;
  description?: string;
  /** Its config and context when created (a LangGraph.js project's `LANGGRAPH_CONFIG`). */
  config?: Record<string, unknown>;
  context?: Record<string, unknown>;
}

/** Route groups a LangGraph.js project's `http.disable_*` switches off (`meta`: `/info`; `/ok` stays for probes). */
export interface DisabledRoutes {
  assistants?: boolean;
  threads?: boolean;
  runs?: boolean;
  store?: boolean;
  meta?: boolean;
}

/** The stable id of a default assistant. */
export function defaultAssistantId(name: string): string {
  return uuid5(name);
}

/**
 * Creates each graph's default assistant, or brings its description up to date. A graph
 * without a configured name is named after its id, unless that is another graph's
 * assistant's name (an agent named like a graph): then after "<id> graph".
 */
export async function ensureAssistants(
  storage: Storage,
  ids: string[],
  defaults: Record<string, DefaultAssistant> = {},
): Promise<void> {
  const taken = new Set(ids.filter((g) => defaults[g]).map((g) => defaults[g]!.name));
  for (const graphId of ids) {
    const d = defaults[graphId];
    const name = d?.name ?? (taken.has(graphId) ? `${graphId} graph` : graphId);
    const created = await storage.assistants.create({
      assistant_id: defaultAssistantId(name),
      graph_id: graphId,
      config: d?.config ?? {},
      ...(d?.context !== undefined ? { context: d.context } : {}),
      metadata: { created_by: "system" },
      name,
      description: d?.description ?? null,
    });
    if (!created) await storage.assistants.syncSystemDescription(defaultAssistantId(name), d?.description ?? null);
  }
}
