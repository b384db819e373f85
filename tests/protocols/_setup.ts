/**
 * Agent servers with the MCP and A2A endpoints mounted, behind the real authenticator
 * (anonymous, or identity_a against the local GoTrue server), and the official clients:
 * the MCP SDK's `Client` over `StreamableHTTPClientTransport`, the A2A SDK's `ClientFactory`.
 */
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type Client as A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { type Message, Role } from "@a2a-js/sdk";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { protocolRoutes } from "../../core/server/protocols/routes.ts";
import { type GoTrueServer, startGoTrue } from "../fixtures/identity-servers/gotrue.ts";
import { type AuthedServer, GRAPHS, startAuthedServer } from "../identity/_agent-server.ts";

export type Provider = "anonymous" | "identity_a";

export interface ProtocolServer extends AuthedServer {
  provider: Provider;
  /** Headers that sign in as `user` (none under anonymous). */
  headersFor(user: string): Promise<Record<string, string>>;
}

const failing = new StateGraph(MessagesAnnotation)
  .addNode("fail", () => {
    throw new Error("the backend is down");
  })
  .addEdge("__start__", "fail")
  .compile();

/** Starts a server for `provider` with graphs echo, slow, interrupt and fail (each with its default assistant). */
export async function startProtocolServer(provider: Provider): Promise<ProtocolServer> {
  let idp: GoTrueServer | null = null;
  const env: Record<string, string> = {};
  if (provider === "identity_a") {
    idp = await startGoTrue();
    Object.assign(env, { IDENTITY_A_URL: idp.url, IDENTITY_A_PUBLISHABLE_DEFAULT_KEY: idp.publishableKey });
  }
  const srv = await startAuthedServer({
    provider,
    env,
    extra: {
      graphs: {
        ...GRAPHS,
        interrupt: async () => (await import("../fixtures/graphs/interrupt.ts")).graph,
        fail: async () => failing,
      },
      defaultAssistants: { echo: { name: "echo", description: "Repeats what you say." } },
      extraRoutes: protocolRoutes({
        version: "test",
        auth: provider === "anonymous" ? "none" : "bearer",
        defaultAssistant: () => "echo",
        skills: (a) => (a.graph_id === "echo" ? [{ name: "repeat", description: "Repeats the message." }] : []),
      }),
    },
  });
  const users = new Map<string, string>();
  return {
    ...srv,
    provider,
    async headersFor(user): Promise<Record<string, string>> {
      if (!idp) return {};
      let id = users.get(user);
      if (!id) users.set(user, id = idp.createUser(`${user}@example.com`));
      return { authorization: `Bearer ${await idp.issueToken(id)}` };
    },
    async close() {
      await srv.close();
      await idp?.close();
    },
  };
}

/** An MCP client connected to `{url}/mcp` sending `headers`. */
export async function connectMcp(url: string, headers: Record<string, string> = {}): Promise<McpClient> {
  const client = new McpClient({ name: "protocols-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

/** A fetch that adds `headers` to every request. */
export function fetchWith(headers: Record<string, string>): typeof fetch {
  return (input, init) => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return fetch(input, { ...init, headers: h });
  };
}

/** An A2A client built from an assistant's card (`?assistant_id=`, or the default card). */
export async function connectA2A(
  url: string,
  headers: Record<string, string> = {},
  assistant?: string,
): Promise<A2AClient> {
  const fetchImpl = fetchWith(headers);
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }));
  return factory.createFromUrl(
    url,
    `/.well-known/agent-card.json${assistant ? `?assistant_id=${encodeURIComponent(assistant)}` : ""}`,
  );
}

/** A user message in the SDK's shape. */
export function userMessage(text: string, opts: { contextId?: string; taskId?: string; data?: unknown } = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: opts.contextId ?? "",
    taskId: opts.taskId ?? "",
    role: Role.ROLE_USER,
    parts: [
      ...(text
        ? [{ content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "" }]
        : []),
      ...(opts.data !== undefined
        ? [{ content: { $case: "data" as const, value: opts.data }, metadata: undefined, filename: "", mediaType: "" }]
        : []),
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
