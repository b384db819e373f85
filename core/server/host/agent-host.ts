/**
 * Hosts a bundle: storage, the deep-agent graph, auth, the chat UI, the Agent API, and the
 * HTTP listener. `dev` and `serve` both run through here, so what runs in production is
 * what runs on a laptop. This file starts the parts in order; each part is a file of its own
 * here: host-settings.ts (the settings), open-storage.ts, sandbox-parts.ts, langgraph-parts.ts,
 * project-graphs.ts, agent-server.ts, running.ts (the listener, reload, shutdown), early.ts
 * (dev's early listener), graph-flags.ts.
 */
import {
  type Env,
  type PluginDriver,
  redactProcessOutput,
  registerSecrets,
  secretValues,
  type ServerLog,
} from "../../kernel/index.ts";
import { limitsFromEnv, type ServerLimits } from "../http/limits.ts";
import type { Bundle } from "../../bundle/index.ts";
import type { AgentServer } from "../app.ts";
import type { Listening } from "./node.ts";
import { type EarlyListener, loadInSteps } from "./early.ts";
import { type GraphModule, loadGraphModules } from "./graph-flags.ts";
import { closeOpened, openHostStorage } from "./open-storage.ts";
import { ProjectGraphs } from "./project-graphs.ts";
import { buildAgentServer, loadServerModules } from "./agent-server.ts";
import { listenOn, runningHost } from "./running.ts";
import { usageSettings } from "./usage-settings.ts";
import {
  connectTimeoutSeconds,
  runTimeoutSeconds,
  serverSettings,
  startSettings,
  storageOptions,
} from "./host-settings.ts";
import { sandboxManager, sandboxRuntime } from "./sandbox-parts.ts";
import { langGraphParts, withLangGraphProject } from "./langgraph-parts.ts";

export { type EarlyListener, listenFirst } from "./early.ts";
export { AGENT_GRAPH_ID, type GraphModule, loadGraphModules, parseGraphFlags } from "./graph-flags.ts";
export { connectTimeoutSeconds, DEFAULT_RUN_TIMEOUT_SECONDS, runTimeoutSeconds } from "./host-settings.ts";

export interface HostOptions {
  bundle: Bundle;
  driver: PluginDriver;
  env: Env;
  mode: "dev" | "serve";
  dataDir: string;
  port: number;
  host: string;
  log: ServerLog;
  /** Extra graph modules by id (`--graph id=path[:export]`); "agent" replaces the project's agent. */
  extraGraphs?: Record<string, GraphModule>;
  /** `--sandbox <runtime>`: run every sandbox with this runtime ("local") instead of the provider. */
  sandboxRuntime?: string | null;
  /** Where a runtime on this machine keeps its sandboxes (`AGENTCLI_SANDBOX_DIR` overrides). */
  sandboxDir?: string;
  /** Host paths sandboxes must never see, besides the data dir and the sandbox dir (the project, the bundle). */
  privatePaths?: string[];
  /** `serve --role`: api, worker or all (default: `AGENTCLI_ROLE`, else all). */
  role?: string;
  /** `serve --workers`: runs executed at once (default: `AGENTCLI_WORKERS`, else 4 per CPU). */
  workers?: number;
  /** A listener already answering `/ok` ({@link listenFirst}); the server takes it over when ready. */
  early?: EarlyListener;
  /**
   * Where a LangGraph.js project's sources are (dev: the project folder); `serve` writes the
   * bundle's files out to `<dataDir>-project` when absent.
   */
  projectDir?: string;
  /** `serve --packages`: the npm packages the build installed, linked into the written-out sources. */
  packagesDir?: string | null;
  /** LangGraph custom auth: the module (absolute path) and export of langgraph.json's `auth.path`. */
  langgraphAuth?: { module: string; exportName: string; studioBypass?: boolean };
}

export interface Host {
  server: AgentServer;
  listening: Listening;
  /** Swaps in a new bundle (dev reload); threads, runs and memory are kept. */
  reload(bundle: Bundle, env: Env): Promise<string[]>;
  close(): Promise<void>;
}

export async function hostBundle(given: HostOptions): Promise<Host> {
  const opts = withLangGraphProject(given);
  const runTimeout = runTimeoutSeconds(opts.env);
  const limits = limitsFromEnv(opts.env);
  // Every secret the deployment holds is redacted from errors, streams, logs and tool results.
  registerSecrets(secretValues(opts.env, opts.bundle.manifest.secrets));
  redactProcessOutput();
  // Once handed over, the early listener is the host's: closed here if the server fails to start.
  const early = opts.early ?? null;
  try {
    return await start({ opts, runTimeout, limits, early });
  } catch (err) {
    early?.serve(null);
    await early?.listening.close();
    throw err;
  }
}

interface StartOptions {
  opts: HostOptions;
  /** `AGENTCLI_RUN_TIMEOUT_SECONDS`, read before the start. */
  runTimeout: number;
  limits: Partial<ServerLimits>;
  early: EarlyListener | null;
}

/** Starts the parts in order; what one opened is closed when a later one fails. */
async function start({ opts, runTimeout, limits, early }: StartOptions): Promise<Host> {
  const settings = await startSettings(opts);
  const usage = await usageSettings(opts);
  const runtime = await sandboxRuntime(opts);
  if (early) await loadInSteps();
  // Storage opens (a new database restores its template on the I/O threads) while the
  // server's modules load; the agent graph is built on its first run.
  const connectWithinMs = connectTimeoutSeconds(opts.env) * 1000;
  const opening = openHostStorage({ mode: opts.mode, options: await storageOptions(opts, connectWithinMs) });
  const closeFirst = async (err: unknown): Promise<never> => {
    await closeOpened(opening);
    throw err;
  };
  const modules = await loadServerModules().catch(closeFirst);
  const lg = await langGraphParts(opts).catch(closeFirst);
  const extra = await loadGraphModules(lg?.modules ?? opts.extraGraphs ?? {}, { log: opts.log, roots: lg?.roots })
    .catch(closeFirst);
  const app = lg ? await lg.app().catch(closeFirst) : null;
  const graphUi = lg ? await Promise.resolve().then(lg.graphUi).catch(closeFirst) : null;
  const storage = await opening;
  const current = { bundle: opts.bundle };
  const sandboxes = await sandboxManager({ opts, storage, runtime: runtime?.name ?? null, current });
  // MCP connections live as long as the host: a reload keeps those its new graph still uses.
  const { mcpPool } = await import("../../harness/index.ts");
  const mcp = mcpPool();
  const graphs = new ProjectGraphs({
    agent: {
      driver: opts.driver,
      checkpointer: storage.checkpointer,
      store: storage.store,
      log: opts.log,
      sandboxes,
      mcp,
    },
    mcp,
    workdir: (bundle) =>
      runtime ? runtime.workdir : opts.driver.spec("sandbox", bundle.config.sandbox.provider)?.workdir,
    extra,
    ...(lg?.reimport ? { reimport: lg.reimport } : {}),
    log: opts.log,
  });
  // OpenTelemetry only when the OTEL_* variables ask for it (the SDK loads then).
  const tracer = await (await import("../../engine/index.ts")).runTracerFromEnv(opts.env, {
    agent: opts.bundle.config.agent.name,
  });
  const idle = await (await import("../../engine/index.ts")).idleCollector({ env: opts.env });
  let server: AgentServer;
  try {
    server = await buildAgentServer({
      host: opts,
      modules,
      storage,
      graphs,
      ...(lg ? { langgraph: { app, graphUi, disable: opts.bundle.config.langgraph!.http.disable } } : {}),
      current: () => current.bundle,
      settings: () => ({
        tracer,
        idle,
        log: opts.log,
        redisUrl: opts.env.REDIS_URL,
        databaseUrl: opts.env.DATABASE_URL,
        connectWithinMs,
        runTimeoutSeconds: runTimeout,
        role: settings.role,
        workers: settings.workers,
        limits,
        usage,
        info: { agent: opts.bundle.config.agent.name, mode: opts.mode },
        onThreadDeleted: (threadId) => sandboxes.deleteThread(threadId),
        ...serverSettings(opts.env, opts.mode),
      }),
    });
  } catch (err) {
    await tracer?.close().catch(() => {});
    await sandboxes.close();
    await storage.close();
    throw err;
  }
  let listening: Listening;
  try {
    listening = await listenOn({
      server,
      early,
      listen: modules.listen,
      port: opts.port,
      host: opts.host,
      log: opts.log,
      settings: settings.listen,
    });
  } catch (err) {
    await server.close();
    await sandboxes.close();
    await storage.close();
    throw err;
  }
  return runningHost({
    server,
    listening,
    graphs,
    current,
    mcp,
    sandboxes,
    storage,
    shutdownMs: settings.shutdownMs,
    log: opts.log,
  });
}
