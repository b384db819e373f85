/**
 * The MCP endpoint (`/mcp`, Streamable HTTP, stateless): every assistant of the deployment is
 * a tool. `tools/list` names each assistant (its name made tool-safe) with its description
 * and the input `{ message, thread_id? }`; `tools/call` runs the assistant on a new thread (or
 * the given one) through the server's run machinery and returns its final answer, with
 * `structuredContent` `{ answer, thread_id, run_id }`. A given `thread_id` must name a thread of
 * the caller: it is never created. Failures (unknown thread, a busy thread,
 * a failed run, an approval the tool cannot give) are `isError` results. With a
 * `progressToken`, each step of the run is a `notifications/progress`; a client that
 * disconnects mid-call cancels the run (stateless: a `notifications/cancelled` arrives on
 * another request and cannot reach it). Params the SDK's schemas refuse are -32602 with a line
 * naming the fields (mcp-params.ts). GET and DELETE answer 405. The caller's identity (auth runs before this route) scopes the threads.
 *
 * @example
 * const routes = [{ path: "/mcp", app: (deps) => mcpRoutes(deps, { version: VERSION }) }];
 */
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AgentcliError, type AuthUser } from "../../kernel/index.ts";
import type { Assistant } from "../../storage/index.ts";
import type { ServerDeps } from "../deps.ts";
import { ownerOf, type RequestClient } from "../../engine/index.ts";
import { type AppEnv, userOf } from "../http/auth-middleware.ts";
import { requestClient } from "../http/client.ts";
import { describeInterrupts, describeUpdate, followTurn, startTurn } from "./turn.ts";

const INVALID_PARAMS = -32602;

export interface McpRoutesOptions {
  /** The server version announced in `initialize`. */
  version: string;
  /** The server name announced in `initialize` (default "agentcli"). */
  name?: string;
}

/** Assistants listed as tools at most (the first by creation). */
const MAX_TOOLS = 100;

/** Tool names per assistant: the name made tool-safe (`[A-Za-z0-9_.-]`, max 64), unique. */
export function toolNames(assistants: Assistant[]): Map<string, Assistant> {
  const out = new Map<string, Assistant>();
  for (const a of assistants) {
    let base = (a.name || a.graph_id).replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 64) ||
      "assistant";
    if (out.has(base)) base = `${base.slice(0, 55)}_${a.assistant_id.slice(0, 8)}`;
    out.set(base, a);
  }
  return out;
}

const inputShape = {
  message: z.string().min(1).describe("The message to send to the assistant."),
  thread_id: z.string().min(1).optional().describe(
    "Continue this thread (from an earlier call's structuredContent.thread_id); omit to start a new one.",
  ),
};

const outputShape = {
  answer: z.string().describe("The assistant's final answer."),
  thread_id: z.string().describe("The thread of the conversation; pass it back to continue."),
  run_id: z.string().describe("The run that produced the answer (visible in the Agent API)."),
};

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

/** One tool call: the caller, the assistant it names, the call's arguments and the SDK's handle on the request. */
interface ToolCall {
  deps: ServerDeps;
  user: AuthUser | null;
  client: RequestClient;
  assistant: Assistant;
  args: { message: string; thread_id?: string };
  extra: {
    signal: AbortSignal;
    _meta?: { progressToken?: string | number };
    sendNotification: (n: never) => Promise<void>;
  };
}

/** Runs the assistant on the call's message and answers with its final message, or an `isError` result. */
async function callAssistant(call: ToolCall): Promise<CallToolResult> {
  const { deps, user, assistant: a, args, extra } = call;
  let run;
  try {
    run = await startTurn(deps, user, {
      client: call.client,
      assistantId: a.assistant_id,
      threadId: args.thread_id ?? null,
      message: args.message,
      metadata: { source: "mcp" },
      names: { message: "arguments.message", thread: "arguments.thread_id" },
    });
  } catch (err) {
    if (err instanceof AgentcliError && err.status === 404 && args.thread_id !== undefined) {
      return errorResult(
        `${err.message}: pass the thread_id of an earlier call's result (a thread of yours), or omit thread_id to start a new thread`,
      );
    }
    if (err instanceof AgentcliError) return errorResult(`${err.message}${err.hint ? ` (${err.hint})` : ""}`);
    throw err;
  }
  const token = extra._meta?.progressToken;
  let step = 0;
  const outcome = await followTurn(deps, run, {
    signal: extra.signal,
    onUpdate: token === undefined ? undefined : async (u) => {
      const message = describeUpdate(u);
      if (!message) return;
      await extra.sendNotification(
        { method: "notifications/progress", params: { progressToken: token, progress: ++step, message } } as never,
      );
    },
  });
  const where = `thread "${run.thread_id}", run "${run.run_id}"`;
  if (outcome.status === "error") return errorResult(`The assistant "${a.name}" failed: ${outcome.error} (${where})`);
  if (outcome.status !== "success") {
    return errorResult(`The assistant "${a.name}" did not finish: the run ended "${outcome.status}" (${where})`);
  }
  if (outcome.interrupts.length) {
    return errorResult(
      `${
        describeInterrupts(outcome.interrupts)
      }\nThe assistant "${a.name}" is waiting on ${where}; approve or reject it through the Agent API or A2A.`,
    );
  }
  return {
    content: [{ type: "text", text: outcome.answer }],
    structuredContent: { answer: outcome.answer, thread_id: run.thread_id, run_id: run.run_id },
  };
}

/**
 * The MCP SDK's server side loads with the first `/mcp` request, not with the server (~3 MB
 * of heap and ~100 ms of start that most deployments never use). Literal imports, so the
 * executable's bundler sees them.
 */
let sdk:
  | Promise<{
    McpServer: typeof import("@modelcontextprotocol/sdk/server/mcp.js").McpServer;
    WebStandardStreamableHTTPServerTransport:
      typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js").WebStandardStreamableHTTPServerTransport;
    mcpParamsError: typeof import("./mcp-params.ts").mcpParamsError;
  }>
  | null = null;
function loadSdk(): NonNullable<typeof sdk> {
  sdk ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/mcp.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("./mcp-params.ts"),
  ]).then(([mcp, http, params]) => ({
    McpServer: mcp.McpServer,
    WebStandardStreamableHTTPServerTransport: http.WebStandardStreamableHTTPServerTransport,
    mcpParamsError: params.mcpParamsError,
  }));
  sdk.catch(() => (sdk = null));
  return sdk;
}

async function buildServer(
  deps: ServerDeps,
  caller: { user: AuthUser | null; client: RequestClient },
  opts: McpRoutesOptions,
): Promise<McpServer> {
  const { user, client } = caller;
  const { McpServer } = await loadSdk();
  const server = new McpServer({ name: opts.name ?? "agentcli", version: opts.version }, {
    capabilities: { tools: { listChanged: false } },
  });
  const assistants = await deps.storage.assistants.search({
    limit: MAX_TOOLS,
    offset: 0,
    sort_by: "created_at",
    sort_order: "asc",
  }, { owner: ownerOf(user) });
  for (const [name, a] of toolNames(assistants)) {
    server.registerTool(name, {
      title: a.name,
      description: a.description ||
        `Ask the assistant "${a.name}" (graph "${a.graph_id}"); it answers with its final message.`,
      inputSchema: inputShape,
      outputSchema: outputShape,
    }, (args, extra) => callAssistant({ deps, user, client, assistant: a, args, extra: extra as never }));
  }
  return server;
}

/** The `/mcp` route group (mount it after the auth middleware). */
export function mcpRoutes(deps: ServerDeps, opts: McpRoutesOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Stateless: no session to stream server-initiated messages on, nothing to delete.
  const notAllowed = (c: Context<AppEnv>) => {
    c.header("Allow", "POST");
    return c.json({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32000,
        message: `Method not allowed: ${c.req.method} ${
          new URL(c.req.url).pathname
        } (this MCP endpoint is stateless: POST only)`,
      },
    }, 405);
  };
  app.get("/", notAllowed);
  app.delete("/", notAllowed);
  app.post("/", async (c) => {
    // A request whose params fail the SDK's schema is answered here (-32602, readable) when
    // the request is otherwise one the transport takes (JSON, accepting JSON and SSE).
    const { WebStandardStreamableHTTPServerTransport, mcpParamsError } = await loadSdk();
    let parsedBody: unknown;
    const accept = c.req.header("accept") ?? "";
    if (
      /application\/json/i.test(c.req.header("content-type") ?? "") && accept.includes("application/json") &&
      accept.includes("text/event-stream")
    ) {
      try {
        parsedBody = JSON.parse(await c.req.raw.clone().text());
      } catch { /* the transport answers the parse error */ }
      const bad = parsedBody === undefined ? null : mcpParamsError(parsedBody);
      if (bad) return c.json({ jsonrpc: "2.0", id: bad.id, error: { code: INVALID_PARAMS, message: bad.message } });
    }
    const server = await buildServer(deps, { user: userOf(c), client: requestClient(c, deps) }, opts);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: false,
    });
    await server.connect(transport);
    const res = await transport.handleRequest(c.req.raw, parsedBody === undefined ? undefined : { parsedBody });
    // The server lives as long as this request's response stream; a client that goes away
    // closes it, which aborts the tool call and so cancels its run.
    if (!res.body) await server.close();
    else c.req.raw.signal.addEventListener("abort", () => void server.close(), { once: true });
    return res;
  });
  return app;
}
