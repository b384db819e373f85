/** One span: input, output, error, latency, token usage, attributes (an `execute`'s exit code, an MCP call's server and tool, the model...). */
import { Json } from "../Json.tsx";
import type { Span } from "./tree.ts";

export function SpanDetail({ span }: { span: Span }) {
  const exit = span.attributes.exit_code;
  const mcp = typeof span.attributes.mcp_server === "string" ? span.attributes.mcp_server : null;
  const mcpTool = typeof span.attributes.mcp_tool === "string" ? span.attributes.mcp_tool : span.name;
  return (
    <div className="card span-detail" data-testid="span-detail">
      <h3>{span.kind} · {span.name} <span className={`badge ${span.status}`}>{span.status}</span></h3>
      <p className="muted small">
        {span.duration_ms !== null ? `${span.duration_ms} ms` : "running"}
        {span.usage ? ` · tokens ${span.usage.input_tokens} in / ${span.usage.output_tokens} out / ${span.usage.total_tokens} total` : ""}
        {span.usage?.cached_input_tokens ? ` · ${span.usage.cached_input_tokens} cached` : ""}
        {span.usage?.reasoning_tokens ? ` · ${span.usage.reasoning_tokens} reasoning` : ""}
        {exit !== undefined ? ` · exit code ${String(exit)}` : ""}
      </p>
      {mcp && <p className="small" data-testid="span-mcp">MCP server <code>{mcp}</code>, tool <code>{mcpTool}</code></p>}
      <h4>Input</h4>
      <Json value={span.input} testId="span-input" />
      <h4>Output</h4>
      <Json value={span.output} testId="span-output" />
      {span.error !== undefined && span.error !== null && (<><h4>Error</h4><Json value={span.error} /></>)}
      <h4>Attributes</h4>
      <Json value={span.attributes} />
    </div>
  );
}
