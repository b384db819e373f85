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
import { type AgentCard, formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from "@a2a-js/sdk";
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { A2AError, PushNotificationNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";
import type { Assistant } from "../../storage/index.ts";
import { resolveAssistant, type ServerDeps } from "../deps.ts";
import { type AppEnv, scopeOf, userOf } from "../http/auth-middleware.ts";
import { requestClient } from "../http/client.ts";
import { AssistantTasks, INTERNAL_MESSAGE } from "./a2a-tasks.ts";
import {
  agentCardInternal,
  agentCardJson,
  type CardAuth,
  type CardOptions,
  type CardSkill,
  legacyAgentCardJson,
} from "./a2a-card.ts";
import {
  invalidRequest,
  isLegacy,
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_METHOD_NOT_FOUND,
  JSONRPC_PARSE_ERROR,
  LEGACY_METHODS,
  methodNotFound,
  METHODS,
  paramsProblem,
  PUSH_METHODS,
  type RpcAnswer,
  rpcError,
  validId,
} from "./a2a-params.ts";

export interface A2AOptions {
  version: string;
  auth: CardAuth;
  /** Skills an assistant's card lists (the project's skills for the project's agent). */
  skills?: (assistant: Assistant) => CardSkill[];
  /** The assistant of the root card (an id, graph id or name; default "agent", else the first). */
  defaultAssistant?: () => string;
}

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

/** Protocol errors go out as they are; anything else is logged and answered generically. */
function errorMapper(legacy: boolean, deps: Pick<ServerDeps, "log">): (err: unknown) => RpcAnswer["error"] {
  const mapA2AError = legacy
    ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
    : JsonRpcTransportHandler.mapToJSONRPCError;
  return (err) => {
    const body = err instanceof A2AError ? mapA2AError(err) : null;
    if (body && body.code !== JSONRPC_INTERNAL_ERROR) return body;
    if ((err as Error | null)?.message !== INTERNAL_MESSAGE) deps.log.error("A2A request failed", err);
    return { code: JSONRPC_INTERNAL_ERROR, message: INTERNAL_MESSAGE };
  };
}

/** A request the SDK may handle, or the answer given before it: the request's envelope and id, or that answer. */
type Checked = { envelope: Record<string, unknown>; id: unknown } | { answer: RpcAnswer };

/**
 * Parse errors (-32700), invalid requests (-32600) and unknown methods (-32601) are answered
 * here: the SDK's handlers call a parse error an invalid request (and, in 1.0, an invalid
 * request invalid params), and check params before the method. Push notification methods and
 * malformed params are answered before the SDK converts the params (which assumes their shape).
 */
function checkRequest(o: {
  body: string;
  ctx: ServerCallContext;
  card: AgentCard;
  legacy: boolean;
  mapError: (err: unknown) => RpcAnswer["error"];
}): Checked {
  const { legacy, mapError } = o;
  let request: unknown;
  try {
    request = JSON.parse(o.body);
  } catch (err) {
    return {
      answer: rpcError(
        null,
        JSONRPC_PARSE_ERROR,
        `Parse error: the body is not valid JSON (${(err as Error).message})`,
      ),
    };
  }
  const envelope = request !== null && typeof request === "object" && !Array.isArray(request)
    ? (request as { jsonrpc?: unknown; id?: unknown; method?: unknown })
    : null;
  const id = envelope?.id ?? null;
  try {
    validateVersion(o.ctx.requestedVersion, o.card, "JSONRPC");
  } catch (err) {
    return { answer: { jsonrpc: "2.0", id, error: mapError(err) } };
  }
  const invalid = invalidRequest(envelope);
  if (invalid || !envelope) {
    return { answer: rpcError(validId(id) ? id : null, JSONRPC_INVALID_REQUEST, `Invalid Request: ${invalid}`) };
  }
  const method = envelope.method as string;
  if (!(legacy ? LEGACY_METHODS : METHODS).includes(method)) {
    return { answer: rpcError(id, JSONRPC_METHOD_NOT_FOUND, methodNotFound(method, legacy)) };
  }
  if (PUSH_METHODS.has(method)) {
    const error = mapError(
      new PushNotificationNotSupportedError(
        `Push notifications are not supported (the agent card says pushNotifications: false): follow a task with ${
          legacy ? "message/stream or tasks/resubscribe" : "SendStreamingMessage or SubscribeToTask"
        }, or poll it with ${legacy ? "tasks/get" : "GetTask"}`,
      ),
    );
    return { answer: { jsonrpc: "2.0", id, error } };
  }
  const problem = paramsProblem(method, (envelope as { params?: unknown }).params, legacy);
  if (problem) {
    return {
      answer: {
        jsonrpc: "2.0",
        id,
        error: mapError(new RequestMalformedError(`Invalid params for ${method}: ${problem}`)),
      },
    };
  }
  return { envelope: envelope as Record<string, unknown>, id };
}

/**
 * A streamed answer as SSE: its events, then an error event if it fails midway. A failure
 * before the first event is a JSON-RPC error answer instead; a client that goes away stops it.
 */
async function sseAnswer(o: {
  c: Context<AppEnv>;
  it: AsyncIterator<unknown>;
  id: unknown;
  mapError: (err: unknown) => RpcAnswer["error"];
}): Promise<Response> {
  const { it, id, mapError } = o;
  let first: IteratorResult<unknown>;
  try {
    first = await it.next();
  } catch (err) {
    return o.c.json({ jsonrpc: "2.0", id, error: mapError(err) });
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
        const mapError = errorMapper(legacy, deps);
        const body = await c.req.text();
        const ctx = new ServerCallContext({ requestedVersion: version });
        const checked = checkRequest({ body, ctx, card, legacy, mapError });
        if ("answer" in checked) return c.json(checked.answer);
        const { envelope, id } = checked;
        const tasks = new AssistantTasks({ deps, assistant: a, user: userOf(c), client: requestClient(c, deps), card });
        const handler = legacy ? new LegacyJsonRpcTransportHandler(tasks) : new JsonRpcTransportHandler(tasks);
        const out = await handler.handle(envelope as Record<string, unknown>, ctx);
        if (!out || typeof (out as AsyncGenerator<unknown>)[Symbol.asyncIterator] !== "function") {
          return c.json(hideInternal(out as RpcAnswer, deps));
        }
        return await sseAnswer({ c, it: (out as AsyncGenerator<unknown>)[Symbol.asyncIterator](), id, mapError });
      });
      return app;
    },
  };
}
