/**
 * What both tracers (the OpenTelemetry export, ./run-tracer.ts, and the local trace,
 * ./span-recorder.ts) read from LangChain's callback arguments, read one way.
 */
import type { LLMResult } from "@langchain/core/outputs";

/** The model name the provider answered with (`response_metadata.model_name` of the first generation). */
export function responseModelOf(output: LLMResult): string | undefined {
  const first = output.generations[0]?.[0] as
    | { message?: { response_metadata?: { model_name?: unknown } } }
    | undefined;
  const model = first?.message?.response_metadata?.model_name;
  return typeof model === "string" ? model : undefined;
}

/** The subagent a deepagents `task` tool call runs (its `subagent_type` argument), else undefined. */
export function subagentOf(toolName: string, args: unknown): string | undefined {
  if (toolName !== "task") return undefined;
  let parsed = args;
  if (typeof args === "string") {
    try {
      parsed = JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  const type = (parsed as { subagent_type?: unknown } | null)?.subagent_type;
  return typeof type === "string" ? type : undefined;
}
