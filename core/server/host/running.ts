/**
 * A started host: its listener (the early one `dev` opened, taken over, or a new one), a
 * dev reload, and the shutdown, which closes what the start opened in reverse order.
 *
 * @example
 * const listening = await listenOn({ server, early, listen, port, host, log, settings });
 * return runningHost({ server, listening, graphs, current, mcp, sandboxes, storage, shutdownMs, log });
 */
import type { Bundle } from "../../bundle/index.ts";
import type { ServerLog } from "../../kernel/index.ts";
import type { AgentServer } from "../app.ts";
import type { Host } from "./agent-host.ts";
import type { EarlyListener } from "./early.ts";
import type { ListenSettings } from "./listen-settings.ts";
import type { Listening } from "./node.ts";
import type { ServerModules } from "./agent-server.ts";
import { projectAssistants, type ProjectGraphs } from "./project-graphs.ts";

/** Serves `server`: on the early listener when there is one (it takes over its waiting requests), else on a new one. */
export async function listenOn(o: {
  server: AgentServer;
  early: EarlyListener | null;
  listen: ServerModules["listen"];
  port: number;
  host: string;
  log: ServerLog;
  settings: ListenSettings;
}): Promise<Listening> {
  if (!o.early) return await o.listen(o.server, { port: o.port, host: o.host, log: o.log, ...o.settings });
  // The project's .env may list more host names than the environment dev started in.
  o.early.listening.allowHosts(o.settings.allowedHosts);
  o.early.serve(o.server.fetch);
  return o.early.listening;
}

export interface RunningParts {
  server: AgentServer;
  listening: Listening;
  graphs: ProjectGraphs;
  /** The bundle served now; a reload replaces it. */
  current: { bundle: Bundle };
  mcp: { close(): Promise<void> };
  sandboxes: { close(): Promise<void> };
  storage: { close(): Promise<void> };
  /** How long a stopping server finishes its runs before it hands them back. */
  shutdownMs: number;
  log: ServerLog;
}

/** The host's handle: reload swaps the bundle (threads, runs and memory are kept); close stops everything. */
export function runningHost(p: RunningParts): Host {
  return {
    server: p.server,
    listening: p.listening,
    async reload(bundle, env) {
      await p.graphs.refresh(bundle);
      await p.graphs.closeAll();
      p.current.bundle = bundle;
      await p.server.reloadGraphs(p.graphs.loaders(bundle, env), projectAssistants(bundle, env));
      return [];
    },
    async close() {
      // Reverse order of setup; a failure in one step never skips the next.
      await p.listening.close().catch((e) => p.log.error(`closing the listener: ${(e as Error).message}`));
      await p.server.close({ graceMs: p.shutdownMs }).catch((e) =>
        p.log.error(`stopping the server: ${(e as Error).message}`)
      );
      await p.graphs.closeAll();
      await p.mcp.close();
      await p.sandboxes.close().catch(() => {});
      await p.storage.close().catch(() => {});
    },
  };
}
