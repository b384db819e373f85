/**
 * MCP tools over `http` (Streamable HTTP) and `sse`, made LangChain tools by
 * `@langchain/mcp-adapters` (`loadMcpTools`: schemas simplified for models, content blocks,
 * per-call timeouts); the connection, its headers and its errors are ours.
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
import type { DynamicStructuredTool, StructuredToolInterface } from "@langchain/core/tools";
import type { ContentBlock } from "@langchain/core/messages";
import { loadMcpTools } from "@langchain/mcp-adapters";
import { expandEnv, type McpServerConfig } from "../config/index.ts";
import type { Env } from "../kernel/index.ts";
import type { ToolOrigin } from "./approvals.ts";

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
  const found: Array<{ server: string; tool: DynamicStructuredTool }> = [];
  const unavailable: McpToolSet["unavailable"] = [];
  await Promise.all(
    Object.entries(servers).map(async ([server, cfg]) => {
      try {
        const client = await connect(server, cfg, env, file);
        clients.push(client);
        // The adapter lists without a deadline of its own: a server that connects and then hangs is unavailable.
        const tools = await withDeadline(
          loadMcpTools(server, client, {
            throwOnLoadError: true,
            defaultToolTimeout: (cfg.timeout ?? DEFAULT_TIMEOUT_S) * 1000,
            afterToolCall: ({ result }) => ({ result: [asText(result[0]), result[1]] }),
          }),
          CONNECT_TIMEOUT_MS,
          `listing its tools took more than ${CONNECT_TIMEOUT_MS / 1000} s`,
        );
        for (const tool of tools) found.push({ server, tool });
      } catch (err) {
        unavailable.push({ server, reason: err instanceof Error ? err.message : String(err) });
      }
    }),
  );
  const counts = new Map<string, number>([...reserved].map((n) => [n, 1]));
  for (const f of found) counts.set(f.tool.name, (counts.get(f.tool.name) ?? 0) + 1);
  const tools: StructuredToolInterface[] = [];
  const origins: ToolOrigin[] = [];
  for (
    const { server, tool } of found.sort((a, b) =>
      a.server.localeCompare(b.server) || a.tool.name.localeCompare(b.tool.name)
    )
  ) {
    const mcpName = tool.name;
    const name = counts.get(mcpName)! > 1 ? `${server}_${mcpName}` : mcpName;
    tool.name = name;
    tool.description ||= `Tool "${mcpName}" of MCP server "${server}".`;
    tool.metadata = { ...tool.metadata, mcp_server: server, mcp_tool: mcpName };
    tools.push(tool);
    origins.push({ name, server, tool: mcpName });
  }
  return {
    tools,
    origins,
    unavailable,
    warnings: unavailable.map((u) =>
      `Cannot use MCP server "${u.server}" of ${file}: ${u.reason}. Its tools are unavailable until it can be reached and the agent restarts.`
    ),
    close: async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}

async function connect(server: string, cfg: McpServerConfig, env: Env, file: string): Promise<Client> {
  const url = new URL(expandEnv(cfg.url, env, `the url of MCP server "${server}" in ${file}`));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(cfg.headers ?? {})) {
    headers[k] = expandEnv(v, env, `header "${k}" of MCP server "${server}" in ${file}`);
  }
  const withHeaders: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } });
  const transport = cfg.transport === "sse"
    ? new SSEClientTransport(url, { requestInit: { headers }, fetch: withHeaders })
    : new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: withHeaders });
  const client = new Client({ name: "agentcli", version: "1" });
  try {
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
  } catch (err) {
    await client.close().catch(() => {});
    throw new Error(
      `cannot connect to ${url.origin}${url.pathname} (${cfg.transport}): ${
        err instanceof Error ? err.message : String(err)
      }`,
    );
  }
  return client;
}

/** `work`, or an error saying `what` once `ms` have passed. */
async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)));
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Text-only results go to the model as one string, as a plain-text tool answer; others stay content blocks. */
function asText(content: string | ContentBlock[]): string | ContentBlock[] {
  if (typeof content === "string" || !content.every((c) => c.type === "text")) return content;
  return content.map((c) => (c as { text?: string }).text ?? "").join("\n");
}
