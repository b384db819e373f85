/**
 * The JSON-RPC requests the A2A endpoint answers itself, before the SDK's transport handlers
 * see them: the methods of each protocol version, what makes a body no JSON-RPC request, an
 * unknown method (naming the other version's when it is one), and params of a known method
 * that the SDK's conversions would trip on.
 *
 * @example
 * paramsProblem("SendMessage", { message: {} }, false); // '"params.message.parts" must be a non-empty array'
 */

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INTERNAL_ERROR = -32603;

export type RpcAnswer = {
  jsonrpc: "2.0";
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

/** The JSON-RPC methods of A2A 1.0 (`A2A-Version: 1.0`) the SDK's transport handler serves. */
export const METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
];
/** The methods of A2A 0.3 (no `A2A-Version`). */
export const LEGACY_METHODS = [
  "message/send",
  "message/stream",
  "tasks/get",
  "tasks/cancel",
  "tasks/resubscribe",
  "tasks/pushNotificationConfig/set",
  "tasks/pushNotificationConfig/get",
  "tasks/pushNotificationConfig/list",
  "tasks/pushNotificationConfig/delete",
  "agent/getAuthenticatedExtendedCard",
];

/** Methods about push notification configs: the cards say `pushNotifications: false`. */
export const PUSH_METHODS = new Set([
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/set",
  "tasks/pushNotificationConfig/get",
  "tasks/pushNotificationConfig/list",
  "tasks/pushNotificationConfig/delete",
]);
/** Methods whose params name a task by `id`. */
const TASK_ID_METHODS = new Set([
  "GetTask",
  "CancelTask",
  "SubscribeToTask",
  "tasks/get",
  "tasks/cancel",
  "tasks/resubscribe",
]);
/** Methods whose params carry a `message`. */
const MESSAGE_METHODS = new Set(["SendMessage", "SendStreamingMessage", "message/send", "message/stream"]);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
/** An absent or non-negative integer count (1.0's ProtoJSON may write integers as strings). */
const isCount = (v: unknown, legacy: boolean) =>
  v === undefined || v === null || (typeof v === "number" && Number.isInteger(v) && v >= 0) ||
  (!legacy && typeof v === "string" && /^\d+$/.test(v));

/**
 * What is wrong with the params of a known method (the SDK's conversions would otherwise
 * look up "undefined" or fail with a JS TypeError), or null. Non-object params are left to
 * the SDK, which answers them -32602 itself.
 */
export function paramsProblem(method: string, params: unknown, legacy: boolean): string | null {
  if (!isObject(params)) return null;
  if (TASK_ID_METHODS.has(method)) {
    if (typeof params.id !== "string" || !params.id) {
      return `"params.id" is required: the id of the task (a non-empty string)`;
    }
    if (!isCount(params.historyLength, legacy)) return `"params.historyLength" must be a non-negative integer`;
    return null;
  }
  if (MESSAGE_METHODS.has(method)) {
    if (!isObject(params.message)) return `"params.message" is required: the message to send (an object)`;
    const parts = params.message.parts;
    if (!Array.isArray(parts) || parts.length === 0) return `"params.message.parts" must be a non-empty array`;
    const conf = params.configuration;
    if (conf !== undefined && conf !== null) {
      if (!isObject(conf)) return `"params.configuration" must be an object`;
      const modes = conf.acceptedOutputModes;
      if (
        modes !== undefined && modes !== null && !(Array.isArray(modes) && modes.every((x) => typeof x === "string"))
      ) return `"params.configuration.acceptedOutputModes" must be an array of strings`;
      if (!isCount(conf.historyLength, legacy)) {
        return `"params.configuration.historyLength" must be a non-negative integer`;
      }
    }
    for (const key of ["extensions", "referenceTaskIds"]) {
      const v = params.message[key];
      if (v !== undefined && v !== null && !(Array.isArray(v) && v.every((x) => typeof x === "string"))) {
        return `"params.message.${key}" must be an array of strings`;
      }
    }
    for (const [i, part] of parts.entries()) {
      const where = `"params.message.parts[${i}]"`;
      if (!isObject(part)) return `${where} must be an object`;
      if (!legacy) {
        if (part.raw !== undefined && typeof part.raw !== "string") return `${where}: "raw" must be a base64 string`;
        continue;
      }
      if (part.kind === "text") {
        if (typeof part.text !== "string") return `${where} is a text part: "text" must be a string`;
      } else if (part.kind === "file") {
        const file = part.file;
        if (!isObject(file) || !(typeof file.bytes === "string" || typeof file.uri === "string")) {
          return `${where} is a file part: "file" must be an object with "bytes" (base64) or "uri"`;
        }
      } else if (part.kind === "data") {
        if (!isObject(part.data)) return `${where} is a data part: "data" must be an object`;
      } else {
        return `${where}: "kind" must be "text", "file" or "data"`;
      }
    }
  }
  return null;
}

/** A JSON-RPC error answer. */
export function rpcError(id: unknown, code: number, message: string) {
  return { jsonrpc: "2.0" as const, id, error: { code, message } };
}

/** Whether a JSON-RPC id is one the spec allows (a string, an integer or null). */
export const validId = (id: unknown) =>
  id === null || typeof id === "string" || (typeof id === "number" && Number.isInteger(id));

/** What makes a parsed body no JSON-RPC 2.0 request, or null when it is one. */
export function invalidRequest(r: { jsonrpc?: unknown; id?: unknown; method?: unknown } | null): string | null {
  if (!r) return "the body must be one JSON-RPC 2.0 request object (batches are not supported)";
  if (r.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0"`;
  if (typeof r.method !== "string" || !r.method) return `"method" must be a non-empty string`;
  if ("id" in r && !validId(r.id)) return `"id" must be a string, an integer or null`;
  return null;
}

/** The answer to an unknown method: the version the request speaks, its methods, and the other version's when it is one of them. */
export function methodNotFound(method: string, legacy: boolean): string {
  const other = legacy
    ? METHODS.includes(method) ? ` "${method}" is an A2A 1.0 method: send the header "A2A-Version: 1.0".` : ""
    : LEGACY_METHODS.includes(method)
    ? ` "${method}" is an A2A 0.3 method: send it without the A2A-Version header.`
    : "";
  const speaks = legacy ? "A2A 0.3 (no A2A-Version header)" : "A2A 1.0";
  return `Method not found: "${method}". This request speaks ${speaks}, whose methods are ${
    (legacy ? LEGACY_METHODS : METHODS).join(", ")
  }.${other}`;
}

/** True for requests that speak A2A 0.3: no `A2A-Version`, or 0.3.x. */
export function isLegacy(version: string | undefined): boolean {
  return !version || /^0\.3(\.\d+)?$/.test(version);
}
