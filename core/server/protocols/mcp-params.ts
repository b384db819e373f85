/**
 * Params checks for the MCP requests this server answers, made before the SDK sees them: the
 * SDK answers a request whose params fail its schema with -32603 and the validator's raw
 * issue dump as the message; here it is -32602 with a short line naming each bad field.
 *
 * @example
 * const bad = mcpParamsError({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
 * // { id: 1, message: 'Invalid params for initialize: "params.protocolVersion" is missing (expected string); ...' }
 */
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The request methods with a schema the SDK checks their params against. */
const SCHEMAS: Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: Issue[] } } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
};

interface Issue {
  code?: string;
  path: PropertyKey[];
  message: string;
  expected?: unknown;
  input?: unknown;
}

/** Issues named at most in one message. */
const MAX_ISSUES = 3;

function describeIssue(i: Issue): string {
  const where = `"${i.path.map(String).join(".") || "request"}"`;
  if (i.code === "invalid_type" && /received undefined/.test(i.message)) {
    return `${where} is missing${i.expected ? ` (expected ${String(i.expected)})` : ""}`;
  }
  return `${where}: ${i.message.replace(/^Invalid input: /, "")}`;
}

/**
 * The id and message of the -32602 answer for one JSON-RPC request whose params the SDK's
 * schema refuses, or null (valid, a notification, a response, an unknown method, a batch).
 */
export function mcpParamsError(message: unknown): { id: string | number; message: string } | null {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return null;
  const m = message as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  if (m.jsonrpc !== "2.0" || typeof m.method !== "string" || !(typeof m.id === "string" || typeof m.id === "number")) {
    return null;
  }
  const schema = Object.hasOwn(SCHEMAS, m.method) ? SCHEMAS[m.method] : undefined;
  const r = schema?.safeParse(message);
  if (!r || r.success) return null;
  const issues = r.error?.issues ?? [];
  const listed = issues.slice(0, MAX_ISSUES).map(describeIssue);
  if (issues.length > MAX_ISSUES) listed.push(`and ${issues.length - MAX_ISSUES} more`);
  return {
    id: m.id,
    message: `Invalid params for ${m.method}: ${listed.join("; ") || "they do not match the method's schema"}`,
  };
}
