/**
 * What `/assistants/{id}/schemas` reports about a compiled graph: the JSON Schemas a graph
 * carries at run time, found as LangGraph's server finds them (a `StateSchema`'s own JSON
 * Schema, then zod schemas registered with LangGraph, then any zod schema converted
 * directly). `context_schema` is the context (config) schema, as LangGraph.js reports it.
 * An `Annotation` graph carries no JSON Schema at run time (LangGraph's server parses its
 * TypeScript source instead); here its state schema lists the state channels, typed as any
 * JSON, and it has no context schema.
 */
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isZodSchemaV3, isZodSchemaV4 } from "@langchain/core/utils/types";
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getUpdateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import type { CompiledGraph } from "../../engine/index.ts";

type Json = Record<string, unknown>;
interface Found {
  state?: Json;
  input?: Json;
  output?: Json;
  config?: Json;
}

/** The `GraphSchema` of a compiled graph. */
export async function graphSchemas(graphId: string, graph: CompiledGraph): Promise<Record<string, unknown>> {
  const found = runtimeSchemas(graph);
  const channels = Object.keys(graph?.channels ?? {}).filter((k) => !k.startsWith("__") && !k.startsWith("branch:"));
  const listed = { type: "object", title: graphId, properties: Object.fromEntries(channels.map((k) => [k, {}])) };
  const state = found?.state ?? (found ? undefined : listed);
  return {
    graph_id: graphId,
    input_schema: found ? found.input ?? null : listed,
    output_schema: found ? found.output ?? null : listed,
    state_schema: state ?? null,
    config_schema: found?.config ?? (found ? null : { type: "object", properties: {} }),
    context_schema: found?.config ?? null,
  };
}

function runtimeSchemas(graph: CompiledGraph): Found | null {
  const builder = graph?.builder;
  if (!builder) return null;
  return fromStateSchema(builder) ?? fromZodRegistry(graph) ?? fromZod(builder);
}

function isStateSchemaLike(v: unknown): v is { getJsonSchema(): Json; getInputJsonSchema(): Json } {
  return typeof v === "object" && v !== null && typeof (v as Json).getJsonSchema === "function" &&
    typeof (v as Json).getInputJsonSchema === "function";
}

/** Graphs declared with `StateSchema`: it knows its JSON Schema. */
function fromStateSchema(builder: Json): Found | null {
  const state = builder._schemaRuntimeDefinition;
  const input = builder._inputRuntimeDefinition;
  const output = builder._outputRuntimeDefinition;
  if (!isStateSchemaLike(state) && !isStateSchemaLike(input) && !isStateSchemaLike(output)) return null;
  const found: Found = {
    state: isStateSchemaLike(state) ? state.getJsonSchema() : undefined,
    // An input not declared apart is the state, every key optional.
    input: isStateSchemaLike(input)
      ? input.getInputJsonSchema()
      : isStateSchemaLike(state)
      ? state.getInputJsonSchema()
      : undefined,
    output: isStateSchemaLike(output) ? output.getJsonSchema() : undefined,
  };
  return found.state || found.input || found.output ? found : null;
}

/** Zod schemas LangGraph registered (with their `withLangGraph` extras). */
function fromZodRegistry(graph: CompiledGraph): Found | null {
  try {
    const found: Found = {
      state: getUpdateTypeSchema(graph) as Json | undefined,
      input: getInputTypeSchema(graph) as Json | undefined,
      output: getOutputTypeSchema(graph) as Json | undefined,
      config: getConfigTypeSchema(graph) as Json | undefined,
    };
    return Object.values(found).some((v) => v != null) ? found : null;
  } catch {
    return null;
  }
}

/** Any zod schema the graph was built with, converted directly. */
function fromZod(builder: Json): Found | null {
  const convert = (schema: unknown): Json | undefined => {
    if (!schema || !(isZodSchemaV4(schema) || isZodSchemaV3(schema))) return undefined;
    try {
      return toJsonSchema(schema as never) as Json;
    } catch {
      return undefined;
    }
  };
  const state = convert(builder._schemaRuntimeDefinition);
  const found: Found = {
    state,
    input: convert(builder._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : undefined),
    output: convert(builder._outputRuntimeDefinition),
    config: convert(builder._configRuntimeSchema),
  };
  return Object.values(found).some((v) => v != null) ? found : null;
}
