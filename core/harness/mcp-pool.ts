/**
 * MCP connections that outlive one agent graph: a `dev` reload builds a new graph, but the
 * servers of an unchanged `mcp.json` (same servers, same environment) keep their connections
 * instead of being closed and opened again on every save. Connections close once, when the
 * host shuts down, or after a reload whose graph no longer uses them. A tool set with a
 * server that could not be reached is never kept: the next graph tries that server again.
 *
 * @example
 * const pool = mcpPool();
 * const g = await createAgentGraph({ ..., mcp: pool });   // g.close() releases, does not close
 * await pool.sweep();                                      // after a reload's graph is built
 * await pool.close();                                      // at shutdown
 */
import { createHash } from "node:crypto";
import type { McpServerConfig } from "../config/index.ts";
import type { Env } from "../kernel/index.ts";
import type { McpToolSet } from "./mcp.ts";

/** How a graph gets its MCP tool sets: `connectMcpServers`'s signature; `close()` on the result releases it. */
export interface McpConnector {
  connect(
    servers: Record<string, McpServerConfig>,
    env: Env,
    file: string,
    reserved?: ReadonlySet<string>,
  ): Promise<McpToolSet>;
}

export interface McpPool extends McpConnector {
  /** Closes the tool sets no graph holds (call after a reload's new graph is built). */
  sweep(): Promise<void>;
  /** Closes every connection (shutdown). */
  close(): Promise<void>;
  /** Open tool sets, for tests and diagnostics. */
  readonly size: number;
}

interface Entry {
  set: Promise<McpToolSet>;
  holders: number;
}

/** A connection pool keyed by the servers' configuration and the environment their `${VAR}`s expand from. */
export function mcpPool(): McpPool {
  const entries = new Map<string, Entry>();
  const drop = async (key: string, entry: Entry) => {
    if (entries.get(key) === entry) entries.delete(key);
    await entry.set.then((s) => s.close(), () => {});
  };
  return {
    get size() {
      return entries.size;
    },
    async connect(servers, env, file, reserved = new Set()) {
      // A digest, so the environment's secret values are not kept as map keys.
      const key = createHash("sha256").update(
        JSON.stringify([servers, file, [...reserved].sort(), Object.entries(env).sort()]),
      ).digest("hex");
      let entry = entries.get(key);
      if (!entry) {
        // The MCP client stack loads with the first connection, not with the server.
        entry = { set: import("./mcp.ts").then((m) => m.connectMcpServers(servers, env, file, reserved)), holders: 0 };
        entries.set(key, entry);
      }
      entry.holders++;
      const held = entry;
      let set: McpToolSet;
      try {
        set = await held.set;
      } catch (err) {
        await drop(key, held);
        throw err;
      }
      let released = false;
      return {
        ...set,
        close: async () => {
          if (released) return;
          released = true;
          held.holders--;
          // A set with an unreachable server is not kept: the next graph connects again.
          if (held.holders === 0 && set.unavailable.length > 0) await drop(key, held);
        },
      };
    },
    async sweep() {
      await Promise.allSettled([...entries].filter(([, e]) => e.holders === 0).map(([k, e]) => drop(k, e)));
    },
    async close() {
      await Promise.allSettled([...entries].map(([k, e]) => drop(k, e)));
    },
  };
}
