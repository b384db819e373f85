/**
 * What `/assistants/{id}/schemas` reports about a compiled graph. LangGraph.js graphs carry
 * no JSON Schema at run time, so the state schema lists the graph's state channels (typed
 * as any JSON); input and output follow the state.
 */
import type { CompiledGraph } from "./graphs.ts";

/** The `GraphSchema` of a compiled graph. */
export function graphSchemas(graphId: string, graph: CompiledGraph): Record<string, unknown> {
  const channels = Object.keys(graph?.channels ?? {}).filter((k) => !k.startsWith("__") && !k.startsWith("branch:"));
  const stateSchema = { type: "object", title: graphId, properties: Object.fromEntries(channels.map((k) => [k, {}])) };
  return {
    graph_id: graphId,
    input_schema: stateSchema,
    output_schema: stateSchema,
    state_schema: stateSchema,
    config_schema: { type: "object", properties: {} },
    context_schema: null,
  };
}
