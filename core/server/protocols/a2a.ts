/**
 * The A2A endpoints: agent cards at `/.well-known/agent-card.json` (public; the default
 * assistant, or `?assistant_id=<id or name>` for another) and JSON-RPC at
 * `/a2a/{assistant_id}` (behind auth). Requests with `A2A-Version: 1.0` speak A2A 1.0
 * (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`);
 * requests without it speak 0.3 (`message/send`, `message/stream`, `tasks/get`,
 * `tasks/cancel`, `tasks/resubscribe`), as the spec asks. The SDK's transport handlers do
 * the wire format; `AssistantTasks` maps tasks onto runs. Streams are SSE.
 *
 * @example
 * const routes = a2aRoutes({ version: VERSION, auth: "bearer", skills: () => [] });
 * extraRoutes.push({ path: "/a2a", app: routes.rpc }, { path: "/.well-known", app: routes.card });
 */
import { type Context, Hono } from "hono";
import { formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from "@a2a-js/sdk";
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { A2AError, PushNotificationNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";
import type { Assistant } from "../../storage/index.ts";
import { resolveAssistant, type ServerDeps } from "../deps.ts";
import { type AppEnv, scopeOf, userOf } from "../../engine/index.ts";
import { AssistantTasks, INTERNAL_MESSAGE } from "./a2a-tasks.ts";
import {
  agentCardInternal,
  agentCardJson,
  type CardAuth,
  type CardOptions,
  type CardSkill,
  legacyAgentCardJson,
} from "./a2a-card.ts";

export interface A2AOptions {
  version: string;
  auth: CardAuth;
  /** Skills an assistant's card lists (the project's skills for the project's agent). */
  skills?: (assistant: Assistant) => CardSkill[];
  /** The assistant of the root card (an id, graph id or name; default "agent", else the first). */
  defaultAssistant?: () => string;
}

const JSONRPC_PARSE_ERROR = -32700;
const JSONRPC_INVALID_REQUEST = -32600;
const JSONRPC_METHOD_NOT_FOUND = -32601;
const JSONRPC_INTERNAL_ERROR = -32603;

type RpcAnswer = {
  jsonrpc: "2.0";
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

/**
 * An SDK answer with its internal error made generic: the SDK answers an unexpected failure
 * (e.g. a JS TypeError converting odd params) -32603 with the JS message, which the peer must
 * not see. `AssistantTasks` already hides its own failures.
 */
export function hideInternal(out: RpcAnswer, deps: Pick<ServerDeps, "log">): RpcAnswer {
  if (out?.error?.code !== JSONRPC_INTERNAL_ERROR || out.error.message === INTERNAL_MESSAGE) return out;
  deps.log.error("A2A request failed", new Error(out.error.message));
  return { jsonrpc: "2.0", id: out.id, error: { code: JSONRPC_INTERNAL_ERROR, message: INTERNAL_MESSAGE } };
}

/** The JSON-RPC methods of A2A 1.0 (`A2A-Version: 1.0`) the SDK's transport handler serves. */
const METHODS = [
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
const LEGACY_METHODS = [
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
const PUSH_METHODS = new Set([
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

function rpcError(id: unknown, code: number, message: string) {
  return { jsonrpc: "2.0" as const, id, error: { code, message } };
}

const validId = (id: unknown) =>
  id === null || typeof id === "string" || (typeof id === "number" && Number.isInteger(id));

/** What makes a parsed body no JSON-RPC 2.0 request, or null when it is one. */
function invalidRequest(r: { jsonrpc?: unknown; id?: unknown; method?: unknown } | null): string | null {
  if (!r) return "the body must be one JSON-RPC 2.0 request object (batches are not supported)";
  if (r.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0"`;
  if (typeof r.method !== "string" || !r.method) return `"method" must be a non-empty string`;
  if ("id" in r && !validId(r.id)) return `"id" must be a string, an integer or null`;
  return null;
}

function methodNotFound(method: string, legacy: boolean): string {
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
function isLegacy(version: string | undefined): boolean {
  return !version || /^0\.3(\.\d+)?$/.test(version);
}

/** The deployment's public origin as the caller reached it. */
function baseOf(c: Context): string {
  const url = new URL(c.req.url);
  const host = c.req.header("x-forwarded-host")?.split(",")[0]?.trim() || url.host;
  const proto = c.req.header("x-forwarded-proto")?.split(",")[0]?.trim() || url.protocol.replace(":", "");
  return `${proto}://${host}`;
}

export interface A2ARoutes {
  /** Mount at `/.well-known` (public). */
  card(deps: ServerDeps): Hono<AppEnv>;
  /** Mount at `/a2a` (behind auth). */
  rpc(deps: ServerDeps): Hono<AppEnv>;
}

/** The A2A route groups. */
export function a2aRoutes(opts: A2AOptions): A2ARoutes {
  const cardOptions = (c: Context, a: Assistant): CardOptions => ({
    base: baseOf(c),
    version: opts.version,
    auth: opts.auth,
    skills: opts.skills?.(a) ?? [],
  });

  const defaultAssistant = async (deps: ServerDeps): Promise<Assistant> => {
    const wanted = opts.defaultAssistant?.() ?? "agent";
    try {
      return await resolveAssistant(deps, wanted, { systemOnly: true });
    } catch (err) {
      const [first] = await deps.storage.assistants.search({
        limit: 1,
        offset: 0,
        sort_by: "created_at",
        sort_order: "asc",
      }, { systemOnly: true });
      if (first) return first;
      throw err;
    }
  };

  return {
    card(deps) {
      const app = new Hono<AppEnv>();
      app.get("/agent-card.json", async (c) => {
        const id = c.req.query("assistant_id");
        // The card is public: it describes the deployment's default assistants, never a user's own.
        const a = id ? await resolveAssistant(deps, id, { systemOnly: true }) : await defaultAssistant(deps);
        const o = cardOptions(c, a);
        c.header("Vary", "A2A-Version");
        c.header("Cache-Control", "no-cache");
        return c.json(isLegacy(c.req.header("A2A-Version")?.trim()) ? legacyAgentCardJson(a, o) : agentCardJson(a, o));
      });
      return app;
    },

    rpc(deps) {
      const app = new Hono<AppEnv>();
      app.post("/:assistant_id", async (c) => {
        const a = await resolveAssistant(deps, c.req.param("assistant_id"), scopeOf(c));
        const card = agentCardInternal(a, cardOptions(c, a));
        const version = c.req.header("A2A-Version")?.trim() || undefined;
        const legacy = isLegacy(version);
        const mapA2AError = legacy
          ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
          : JsonRpcTransportHandler.mapToJSONRPCError;
        // Protocol errors go out as they are; anything else is logged and answered generically.
        const mapError = (err: unknown) => {
          const body = err instanceof A2AError ? mapA2AError(err) : null;
          if (body && body.code !== JSONRPC_INTERNAL_ERROR) return body;
          if ((err as Error | null)?.message !== INTERNAL_MESSAGE) deps.log.error("A2A request failed", err);
          return { code: JSONRPC_INTERNAL_ERROR, message: INTERNAL_MESSAGE };
        };
        // Parse errors (-32700), invalid requests (-32600) and unknown methods (-32601) are
        // answered here: the SDK's handlers call a parse error an invalid request (and, in
        // 1.0, an invalid request invalid params), and check params before the method.
        let request: unknown;
        try {
          request = JSON.parse(await c.req.text());
        } catch (err) {
          return c.json(
            rpcError(null, JSONRPC_PARSE_ERROR, `Parse error: the body is not valid JSON (${(err as Error).message})`),
          );
        }
        const envelope = request !== null && typeof request === "object" && !Array.isArray(request)
          ? (request as { jsonrpc?: unknown; id?: unknown; method?: unknown })
          : null;
        const id = envelope?.id ?? null;
        const ctx = new ServerCallContext({ requestedVersion: version });
        try {
          validateVersion(ctx.requestedVersion, card, "JSONRPC");
        } catch (err) {
          return c.json({ jsonrpc: "2.0", id, error: mapError(err) });
        }
        const invalid = invalidRequest(envelope);
        if (invalid || !envelope) {
          return c.json(rpcError(validId(id) ? id : null, JSONRPC_INVALID_REQUEST, `Invalid Request: ${invalid}`));
        }
        const method = envelope.method as string;
        if (!(legacy ? LEGACY_METHODS : METHODS).includes(method)) {
          return c.json(rpcError(id, JSONRPC_METHOD_NOT_FOUND, methodNotFound(method, legacy)));
        }
        // Answered before the SDK converts the params (which assumes their shape).
        if (PUSH_METHODS.has(method)) {
          return c.json({
            jsonrpc: "2.0",
            id,
            error: mapError(
              new PushNotificationNotSupportedError(
                `Push notifications are not supported (the agent card says pushNotifications: false): follow a task with ${
                  legacy ? "message/stream or tasks/resubscribe" : "SendStreamingMessage or SubscribeToTask"
                }, or poll it with ${legacy ? "tasks/get" : "GetTask"}`,
              ),
            ),
          });
        }
        const problem = paramsProblem(method, (envelope as { params?: unknown }).params, legacy);
        if (problem) {
          return c.json({
            jsonrpc: "2.0",
            id,
            error: mapError(new RequestMalformedError(`Invalid params for ${method}: ${problem}`)),
          });
        }
        const tasks = new AssistantTasks({ deps, assistant: a, user: userOf(c), card });
        const handler = legacy ? new LegacyJsonRpcTransportHandler(tasks) : new JsonRpcTransportHandler(tasks);
        const out = await handler.handle(envelope as Record<string, unknown>, ctx);
        if (!out || typeof (out as AsyncGenerator<unknown>)[Symbol.asyncIterator] !== "function") {
          return c.json(hideInternal(out as RpcAnswer, deps));
        }
        const it = (out as AsyncGenerator<unknown>)[Symbol.asyncIterator]();
        let first: IteratorResult<unknown>;
        try {
          first = await it.next();
        } catch (err) {
          return c.json({ jsonrpc: "2.0", id, error: mapError(err) });
        }
        const encoder = new TextEncoder();
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            try {
              if (!first.done) controller.enqueue(encoder.encode(formatSSEEvent(first.value)));
              while (true) {
                const n = await it.next();
                if (n.done) break;
                controller.enqueue(encoder.encode(formatSSEEvent(n.value)));
              }
            } catch (err) {
              try {
                controller.enqueue(encoder.encode(formatSSEErrorEvent({ jsonrpc: "2.0", id, error: mapError(err) })));
              } catch { /* the client went away */ }
            }
            try {
              controller.close();
            } catch { /* closed already */ }
          },
          cancel() {
            void it.return?.(undefined);
          },
        });
        return new Response(stream, { status: 200, headers: SSE_HEADERS });
      });
      return app;
    },
  };
}
