/**
 * The agent as a tool and as a peer: the MCP endpoint (`/mcp`) and the A2A endpoints
 * (`/.well-known/agent-card.json`, `/a2a/{assistant_id}`), as `extraRoutes` of
 * `createAgentServer` (mounted after its auth middleware, which lets `/.well-known/*` through).
 *
 * @example
 * const server = await createAgentServer({ graphs, authenticate, extraRoutes: protocolRoutes({ version: VERSION, auth: "bearer" }) });
 */
import type { Hono } from "hono";
import type { ServerDeps } from "../deps.ts";
import { type A2AOptions, a2aRoutes } from "./a2a.ts";
import { mcpRoutes } from "./mcp.ts";

export type { A2AOptions } from "./a2a.ts";
export type { CardAuth, CardSkill } from "./a2a-card.ts";

/** The route entries for `createAgentServer({ extraRoutes })`. */
export function protocolRoutes(
  opts: A2AOptions & { name?: string },
): Array<{ path: string; app: (deps: ServerDeps) => Hono<any> }> {
  const a2a = a2aRoutes(opts);
  return [
    { path: "/mcp", app: (deps) => mcpRoutes(deps, { version: opts.version, name: opts.name }) },
    { path: "/a2a", app: a2a.rpc },
    { path: "/.well-known", app: a2a.card },
  ];
}
