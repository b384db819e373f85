/**
 * Run tracing through OpenTelemetry's SDK, configured by the standard variables:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) turns it on,
 * `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k=v`) adds headers, `OTEL_SERVICE_NAME` names the
 * service, `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off. Every run is a
 * span (`run <graph>`) with the graph's steps, model calls (`chat <model>`, with token counts)
 * and tool calls (`execute_tool <name>`; the `task` tool's span names its subagent) under it,
 * exported over OTLP/HTTP (protobuf). Spans are tagged with the deployment's tracing project
 * (`AGENTCLI_TRACING_PROJECT`, which the control plane sets to the deployment's name, else
 * `LANGSMITH_PROJECT`, else the agent's name). They carry ids, names and counts, never inputs,
 * outputs or credentials; error messages are redacted. The SDK is loaded only when configured.
 *
 * With `LANGSMITH_TRACING=true` and `LANGSMITH_API_KEY` (or the older `LANGCHAIN_TRACING_V2`,
 * `LANGCHAIN_API_KEY`), runs are also traced to LangSmith by LangChain's own tracer
 * (`LANGSMITH_ENDPOINT`, `LANGSMITH_PROJECT`), whatever the process environment holds (the
 * server's variables may come from the project's `.env`).
 *
 * @example
 * const tracer = await runTracerFromEnv(process.env, { agent: "my-agent" }); // null when not configured
 */
import type { RunTracer } from "./run-tracer.ts";

export type { RunTrace, RunTracer } from "./run-tracer.ts";

/** The OTLP traces URL the environment names, or null when tracing is off. */
export function otlpTracesUrl(env: Record<string, string | undefined>): string | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return null;
  if (env.OTEL_TRACES_EXPORTER?.split(",").map((s) => s.trim()).includes("none")) return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : null;
}

/** Whether the environment asks for LangSmith tracing (and has its key). */
export function langSmithEnabled(env: Record<string, string | undefined>): boolean {
  const on = (env.LANGSMITH_TRACING ?? env.LANGCHAIN_TRACING_V2 ?? "").trim().toLowerCase();
  return (on === "true" || on === "1") && Boolean(env.LANGSMITH_API_KEY ?? env.LANGCHAIN_API_KEY);
}

/** A tracer for the server's runs when OTLP and/or LangSmith are configured (loading their SDKs then), else null. */
export async function runTracerFromEnv(
  env: Record<string, string | undefined>,
  opts: { agent: string },
): Promise<RunTracer | null> {
  const url = otlpTracesUrl(env);
  const langsmith = langSmithEnabled(env);
  if (!url && !langsmith) return null;
  const { combineTracers, createLangSmithRunTracer, createOtlpRunTracer } = await import("./run-tracer.ts");
  const project = env.AGENTCLI_TRACING_PROJECT?.trim() || env.LANGSMITH_PROJECT?.trim() || opts.agent;
  const langsmithTracer = langsmith
    ? await createLangSmithRunTracer({
      apiKey: (env.LANGSMITH_API_KEY ?? env.LANGCHAIN_API_KEY)!,
      apiUrl: env.LANGSMITH_ENDPOINT?.trim() || env.LANGCHAIN_ENDPOINT?.trim() || undefined,
      project: env.LANGSMITH_PROJECT?.trim() || project,
    })
    : null;
  if (!url) return langsmithTracer;
  const headers: Record<string, string> = {};
  for (const pair of (env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq > 0) headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  const otlp = createOtlpRunTracer({ url, headers, serviceName: env.OTEL_SERVICE_NAME?.trim() || opts.agent, project });
  return langsmithTracer ? combineTracers(otlp, langsmithTracer) : otlp;
}
