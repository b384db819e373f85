/** The settings of docs/configuration.md's section Tracing. */
import { inGroup, type Setting } from "./setting.ts";

const setting = inGroup("tracing");

export const TRACING_SETTINGS: readonly Setting[] = [
  setting(
    "AGENTCLI_TRACE_RETENTION_SECONDS",
    "604800 (7 days)",
    "Seconds each run's trace (its model, tool and subagent calls, `GET /threads/{id}/runs/{run_id}/trace`) is kept in the server's database; `0` records none.",
  ),
  setting(
    "AGENTCLI_TRACING_PROJECT",
    "`LANGSMITH_PROJECT`, else the agent's name",
    "The tracing project spans are tagged with (the control plane sets the deployment's name).",
  ),
  setting(
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "unset (no OpenTelemetry tracing)",
    "The collector's base URL (`/v1/traces` is appended); turns tracing on.",
  ),
  setting("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "unset", "The collector's full traces URL; turns tracing on."),
  setting(
    "OTEL_EXPORTER_OTLP_HEADERS",
    "unset",
    "`key=value,...` headers sent to the collector (also `OTEL_EXPORTER_OTLP_TRACES_HEADERS`).",
  ),
  setting("OTEL_SERVICE_NAME", "the agent's name", "The service name of the spans."),
  setting(
    "OTEL_SDK_DISABLED",
    "unset",
    "`true` turns OpenTelemetry tracing off (as does `OTEL_TRACES_EXPORTER=none`).",
  ),
  setting(
    "LANGSMITH_TRACING",
    "unset",
    "`true` with `LANGSMITH_API_KEY` (or `LANGCHAIN_TRACING_V2`, `LANGCHAIN_API_KEY`) also traces runs to LangSmith, inputs and outputs included.",
  ),
  setting("LANGSMITH_ENDPOINT", "LangSmith's", "Where LangSmith traces go (or `LANGCHAIN_ENDPOINT`)."),
  setting("LANGSMITH_PROJECT", "the tracing project", "The LangSmith project of the traces."),
];
