/**
 * MCP tools over `http` (Streamable HTTP) and `sse`, wrapped as LangChain tools.
 *
 * Servers are connected when the graph is built; one that cannot be reached (or whose
 * `${VAR}` is unset) becomes a warning, and every run's prompt says that its tools are
 * unavailable, so the model can tell the user instead of guessing. A call that fails later
 * (server down, timeout, `isError` result) is a tool error the model sees.
 * Tool names are the MCP tool names; when two servers share one, both become
 * `<server>_<tool>` (so does one named like a built-in tool).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { DynamicStructuredTool, type StructuredToolInterface } from "@langchain/core/tools";
import type { McpServerConfig } from "../config/schema.ts";
import type { Env } from "../hooks.ts";
import type { ToolOrigin } from "./approvals.ts";
import { expandEnv } from "../config/mcp.ts";

const DEFAULT_TIMEOUT_S = 60;
const CONNECT_TIMEOUT_MS = 10_000;

export interface McpToolSet {
  tools: StructuredToolInterface[];
  origins: ToolOrigin[];
  /** Servers that could not be used, with the reason (already in `warnings`). */
  unavailable: Array<{ server: string; reason: string }>;
  warnings: string[];
  close(): Promise<void>;
}

/**
 * Connects to every server of an `mcp.json` and lists its tools.
 *
 * @example
 * const set = await connectMcpServers(config.mcp, env, "mcp.json");
 */
export async function connectMcpServers(
  servers: Record<string, McpServerConfig>,
  env: Env,
  file: string,
  reserved: ReadonlySet<string> = new Set(),
): Promise<McpToolSet> {
  const clients: Client[] = [];
  const found: Array<{ server: string; client: Client; timeoutMs: number; tool: { name: string; description?: string; inputSchema: Record<string, unknown> } }> = [];
  const unavailable: McpToolSet["unavailable"] = [];
  await Promise.all(Object.entries(servers).map(async ([server, cfg]) => {
    try {
      const client = await connect(server, cfg, env, file);
      clients.push(client);
      const timeoutMs = (cfg.timeout ?? DEFAULT_TIMEOUT_S) * 1000;
      for (let cursor: string | undefined, first = true; first || cursor; first = false) {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: CONNECT_TIMEOUT_MS });
        for (const tool of page.tools) found.push({ server, client, timeoutMs, tool: tool as never });
        cursor = page.nextCursor;
      }
    } catch (err) {
      unavailable.push({ server, reason: err instanceof Error ? err.message : String(err) });
    }
  }));
  const counts = new Map<string, number>([...reserved].map((n) => [n, 1]));
  for (const f of found) counts.set(f.tool.name, (counts.get(f.tool.name) ?? 0) + 1);
  const tools: StructuredToolInterface[] = [];
  const origins: ToolOrigin[] = [];
  for (const f of found.sort((a, b) => a.server.localeCompare(b.server) || a.tool.name.localeCompare(b.tool.name))) {
    const name = counts.get(f.tool.name)! > 1 ? `${f.server}_${f.tool.name}` : f.tool.name;
    tools.push(wrapTool(name, f.server, f.client, f.tool, f.timeoutMs));
    origins.push({ name, server: f.server, tool: f.tool.name });
  }
  return {
    tools,
    origins,
    unavailable,
    warnings: unavailable.map((u) => `Cannot use MCP server "${u.server}" of ${file}: ${u.reason}. Its tools are unavailable until it can be reached and the agent restarts.`),
    close: async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}

async function connect(server: string, cfg: McpServerConfig, env: Env, file: string): Promise<Client> {
  const url = new URL(expandEnv(cfg.url, env, `the url of MCP server "${server}" in ${file}`));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(cfg.headers ?? {})) headers[k] = expandEnv(v, env, `header "${k}" of MCP server "${server}" in ${file}`);
  const withHeaders: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } });
  const transport = cfg.transport === "sse"
    ? new SSEClientTransport(url, { requestInit: { headers }, fetch: withHeaders })
    : new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: withHeaders });
  const client = new Client({ name: "agentcli", version: "1" });
  try {
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
  } catch (err) {
    await client.close().catch(() => {});
    throw new Error(`cannot connect to ${url.origin}${url.pathname} (${cfg.transport}): ${err instanceof Error ? err.message : String(err)}`);
  }
  return client;
}

function wrapTool(
  name: string,
  server: string,
  client: Client,
  tool: { name: string; description?: string; inputSchema: Record<string, unknown> },
  timeoutMs: number,
): StructuredToolInterface {
  return new DynamicStructuredTool({
    name,
    description: tool.description || `Tool "${tool.name}" of MCP server "${server}".`,
    schema: { type: "object", properties: {}, ...tool.inputSchema } as never,
    metadata: { mcp_server: server, mcp_tool: tool.name },
    func: async (args: Record<string, unknown>) => {
      let result;
      try {
        result = await client.callTool({ name: tool.name, arguments: args }, undefined, { timeout: timeoutMs });
      } catch (err) {
        throw new Error(`MCP server "${server}" failed on "${tool.name}": ${err instanceof Error ? err.message : String(err)}`);
      }
      const text = (result.content as Array<{ type: string; text?: string }> | undefined ?? [])
        .map((c) => (c.type === "text" ? c.text ?? "" : JSON.stringify(c)))
        .join("\n");
      if (result.isError) throw new Error(`MCP tool "${tool.name}" of "${server}" returned an error: ${text}`);
      return text || JSON.stringify(result.structuredContent ?? "");
    },
  });
}
