/**
 * The OpenAPI operations of the MCP and A2A endpoints, keyed by the path each group is
 * mounted at (`protocolRoutes`). `openApiDocument` lists them for every mounted group; the
 * schemas they name (`JsonRpcRequest`, `JsonRpcResponse`, `AgentCard`) are in
 * `PROTOCOL_SCHEMAS`. Operations behind auth carry no `security` of their own (the
 * document's, as for the Agent API); the agent card is public (`security: []`).
 *
 * @example
 * const paths = PROTOCOL_OPERATIONS["/mcp"]; // { "/mcp": { post, get, delete } }
 */

type PathItems = Record<string, Record<string, Record<string, unknown>>>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ "application/json": { schema } });
const jsonRpcError = (description: string) => ({ description, content: json(ref("JsonRpcResponse")) });
const detailError = (description: string) => ({ description, content: json(ref("Error")) });
const UNAUTHORIZED = detailError("No valid credentials (the deployment's identity provider or x-api-key)");
const SSE = { "text/event-stream": { schema: { type: "string", description: "Server-sent events, each `data:` a JSON-RPC message." } } };

const mcpNotAllowed = (method: string) => ({
  summary: `Not allowed: the MCP endpoint is stateless (${method} answers 405)`,
  description: "No session exists to open a server-to-client stream on or to end, so only POST is served.",
  tags: ["MCP"],
  responses: {
    "405": {
      description: "Method not allowed; `Allow: POST`",
      headers: { Allow: { schema: { type: "string", const: "POST" } } },
      content: json(ref("JsonRpcResponse")),
    },
    "401": UNAUTHORIZED,
  },
});

const a2aVersionHeader = {
  name: "A2A-Version",
  in: "header",
  required: false,
  description: "`1.0` for A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`); absent or `0.3` for A2A 0.3 (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`).",
  schema: { type: "string", examples: ["1.0", "0.3"] },
};

/** Operations of each protocol mount path. */
export const PROTOCOL_OPERATIONS: Record<string, PathItems> = {
  "/mcp": {
    "/mcp": {
      post: {
        summary: "MCP endpoint: JSON-RPC over Streamable HTTP (stateless)",
        description:
          "Model Context Protocol, Streamable HTTP transport without sessions: `initialize`, `tools/list` (each assistant is a tool taking `{ message, thread_id? }`), `tools/call` (runs the assistant; its final answer as content, failures as `isError` results; `notifications/progress` per step when the request has a `progressToken`). Requests are answered as an SSE stream; notifications and responses alone with 202.",
        tags: ["MCP"],
        parameters: [
          { name: "Accept", in: "header", required: true, description: "Must accept both `application/json` and `text/event-stream`.", schema: { type: "string", examples: ["application/json, text/event-stream"] } },
          { name: "MCP-Protocol-Version", in: "header", required: false, description: "The protocol version agreed in `initialize`.", schema: { type: "string" } },
        ],
        requestBody: {
          required: true,
          content: json({ oneOf: [ref("JsonRpcRequest"), { type: "array", items: ref("JsonRpcRequest") }] }),
        },
        responses: {
          "200": { description: "The JSON-RPC response(s), and progress notifications before them", content: SSE },
          "202": { description: "Accepted (the body held only notifications or responses)" },
          "400": jsonRpcError("Not a JSON-RPC message, or an unsupported protocol version"),
          "401": UNAUTHORIZED,
          "406": jsonRpcError("The Accept header does not allow both application/json and text/event-stream"),
          "415": jsonRpcError("The body is not application/json"),
        },
      },
      get: mcpNotAllowed("GET"),
      delete: mcpNotAllowed("DELETE"),
    },
  },
  "/.well-known": {
    "/.well-known/agent-card.json": {
      get: {
        summary: "A2A agent card of an assistant (public)",
        description:
          "The card of the deployment's agent, or of the assistant named by `assistant_id`: name, description, skills (the project's skills), capabilities (streaming) and the auth schemes `/a2a/{assistant_id}` accepts. With `A2A-Version: 1.0` the A2A 1.0 form (`supportedInterfaces`), otherwise the A2A 0.3 form (`url`, `preferredTransport`).",
        tags: ["A2A"],
        security: [],
        parameters: [
          { name: "assistant_id", in: "query", required: false, description: "An assistant id, graph id or assistant name; default: the project's agent.", schema: { type: "string" } },
          a2aVersionHeader,
        ],
        responses: {
          "200": { description: "The agent card", content: json(ref("AgentCard")) },
          "404": detailError("No assistant with that id, graph id or name"),
        },
      },
    },
  },
  "/a2a": {
    "/a2a/{assistant_id}": {
      post: {
        summary: "A2A JSON-RPC endpoint of an assistant",
        description:
          "Agent2Agent JSON-RPC: `message/send` (a task per run, `contextId` is the thread), `message/stream` (SSE), `tasks/get`, `tasks/cancel`, `tasks/resubscribe` (SSE); their A2A 1.0 names with `A2A-Version: 1.0`. An approval-gated interrupt is an `input-required` task the peer answers with a message on the same task.",
        tags: ["A2A"],
        parameters: [
          { name: "assistant_id", in: "path", required: true, description: "An assistant id, graph id or assistant name.", schema: { type: "string" } },
          a2aVersionHeader,
        ],
        requestBody: { required: true, content: json(ref("JsonRpcRequest")) },
        responses: {
          "200": {
            description: "The JSON-RPC response (errors included, as JSON-RPC errors); for `message/stream`, `tasks/resubscribe`, `SendStreamingMessage` and `SubscribeToTask` an SSE stream of JSON-RPC responses",
            content: { ...json(ref("JsonRpcResponse")), ...SSE },
          },
          "401": UNAUTHORIZED,
          "404": detailError("No assistant with that id, graph id or name"),
        },
      },
    },
  },
};

/** Component schemas the protocol operations refer to. */
export const PROTOCOL_SCHEMAS: Record<string, unknown> = {
  JsonRpcRequest: {
    type: "object",
    properties: {
      jsonrpc: { const: "2.0" },
      id: { type: ["string", "integer", "null"], description: "Absent for notifications." },
      method: { type: "string" },
      params: { type: ["object", "array"] },
    },
    required: ["jsonrpc", "method"],
  },
  JsonRpcResponse: {
    type: "object",
    properties: {
      jsonrpc: { const: "2.0" },
      id: { type: ["string", "integer", "null"] },
      result: {},
      error: { type: "object", properties: { code: { type: "integer" }, message: { type: "string" }, data: {} }, required: ["code", "message"] },
    },
    required: ["jsonrpc"],
  },
  AgentCard: {
    type: "object",
    description: "An A2A agent card (A2A 1.0 or 0.3 form, after the request's A2A-Version).",
    properties: {
      name: { type: "string" },
      description: { type: "string" },
      version: { type: "string" },
      url: { type: "string", description: "A2A 0.3: the JSON-RPC URL." },
      supportedInterfaces: { type: "array", description: "A2A 1.0: the JSON-RPC URL per protocol version.", items: { type: "object" } },
      capabilities: { type: "object" },
      securitySchemes: { type: "object" },
      skills: { type: "array", items: { type: "object", properties: { id: { type: "string" }, name: { type: "string" }, description: { type: "string" } } } },
    },
    required: ["name", "description", "skills"],
  },
};
