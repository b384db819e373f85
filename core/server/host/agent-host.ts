/**
 * Hosts a bundle: storage, the deep-agent graph, auth, the chat UI, the Agent API, and the
 * HTTP listener. `dev` and `serve` both run through here, so what runs in production is
 * what runs on a laptop. This file reads the host's settings and starts the parts in order;
 * each part is a file of its own here: open-storage.ts, project-graphs.ts, agent-server.ts,
 * running.ts (the listener, reload, shutdown), early.ts (dev's early listener), graph-flags.ts.
 */
import { resolve } from "node:path";
import {
  type Env,
  type PluginDriver,
  redactProcessOutput,
  registerSecrets,
  renewSourceModules,
  secretValues,
  type ServerLog,
} from "../../kernel/index.ts";
import { secondsSetting, switchSetting } from "../../config/index.ts";
import { corsFromEnv } from "../http/cors.ts";
import { ttlFromEnv, webhooksFromEnv } from "../../engine/index.ts";
import {
  DEFAULT_CONNECT_TIMEOUT_SECONDS,
  DEFAULT_DB_RETRY_SECONDS,
  DEFAULT_QUEUE_AFFINITY_SECONDS,
  DEFAULT_RUN_LEASE_SECONDS,
  type Storage,
  type StorageOptions,
} from "../../storage/index.ts";
import { limitsFromEnv, type ServerLimits } from "../http/limits.ts";
import type { Bundle } from "../../bundle/index.ts";
import type { AgentServer, AgentServerOptions } from "../app.ts";
import type { Listening } from "./node.ts";
import { type EarlyListener, loadInSteps } from "./early.ts";
import { type GraphModule, loadGraphModules } from "./graph-flags.ts";
import { closeOpened, openHostStorage } from "./open-storage.ts";
import { ProjectGraphs } from "./project-graphs.ts";
import { buildAgentServer, loadServerModules } from "./agent-server.ts";
import { listenOn, runningHost } from "./running.ts";
import { usageSettings } from "./usage-settings.ts";

export { type EarlyListener, listenFirst } from "./early.ts";
export { AGENT_GRAPH_ID, type GraphModule, loadGraphModules, parseGraphFlags } from "./graph-flags.ts";

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

/** Default limit of one run's execution time (as LangGraph's servers: an hour). */
export const DEFAULT_RUN_TIMEOUT_SECONDS = 3600;

/** `AGENTCLI_RUN_TIMEOUT_SECONDS`: seconds a run may execute before it ends `timeout` (0: no limit). */
export function runTimeoutSeconds(env: Env): number {
  return secondsSetting(env, "AGENTCLI_RUN_TIMEOUT_SECONDS", {
    default: DEFAULT_RUN_TIMEOUT_SECONDS,
    meaning: "a run may execute (0 for no limit)",
  });
}

/**
 * `AGENTCLI_CONNECT_TIMEOUT_SECONDS`: how long the start-up keeps trying to reach PostgreSQL
 * and Redis before it fails.
 */
export function connectTimeoutSeconds(env: Env): number {
  return secondsSetting(env, "AGENTCLI_CONNECT_TIMEOUT_SECONDS", {
    default: DEFAULT_CONNECT_TIMEOUT_SECONDS,
    meaning: "the start-up keeps trying to reach PostgreSQL and Redis",
  });
}

/** The settings read before anything opens: a bad value stops the start first. */
async function startSettings(opts: HostOptions) {
  const { roleSetting, workersSetting } = await import("../../engine/index.ts");
  const role = roleSetting(opts.role, opts.env);
  const { listenSettings } = await import("./listen-settings.ts");
  const listen = listenSettings(opts.env, { mode: opts.mode, bind: opts.host });
  const workers = workersSetting(opts.workers, opts.env, role);
  const shutdownMs = secondsSetting(opts.env, "AGENTCLI_SHUTDOWN_SECONDS", {
    default: 10,
    meaning: "a stopping replica finishes its runs before it hands them back",
  }) * 1000;
  const { sandboxIdleSeconds } = await import("../../harness/index.ts");
  sandboxIdleSeconds(opts.env);
  return { role, listen, workers, shutdownMs };
}

/** Where storage is (`DATABASE_URL`, else the data dir) and how it is reached, encrypted and indexed. */
async function storageOptions(opts: HostOptions, connectWithinMs: number): Promise<StorageOptions> {
  const encryption = (await import("../../storage/index.ts")).encryptionFromEnv(opts.env);
  const storeIndex = (await import("../../harness/index.ts")).storeIndexFromEnv(opts.env, opts.driver);
  // How long background work waits out a database restart (./storage/db-retry.ts).
  const dbRetryMs = secondsSetting(opts.env, "AGENTCLI_DB_RETRY_SECONDS", {
    default: DEFAULT_DB_RETRY_SECONDS,
    meaning: "work waits for an unreachable PostgreSQL before it fails",
  }) * 1000;
  const pgPrepare = switchSetting(opts.env, "AGENTCLI_PG_PREPARED_STATEMENTS", {
    default: true,
    meaning:
      "statements the server sends again are prepared by name on PostgreSQL (0 behind a pooler that cannot keep them, such as PgBouncer before 1.21 in transaction mode)",
  });
  const url = opts.env.DATABASE_URL;
  return url
    ? {
      url,
      connect: { withinMs: connectWithinMs, variable: "DATABASE_URL" },
      retryMs: dbRetryMs,
      prepare: pgPrepare,
      encryption,
      storeIndex,
      revision: opts.mode === "serve" ? opts.env.AGENTCLI_REVISION_ID?.trim() || null : null,
    }
    : { dataDir: opts.dataDir, encryption, storeIndex };
}

/** The server's settings from the environment, read as the server is created. */
function serverSettings(env: Env, mode: HostOptions["mode"]): Partial<AgentServerOptions> {
  return {
    runLeaseSeconds: secondsSetting(env, "AGENTCLI_RUN_LEASE_SECONDS", {
      default: DEFAULT_RUN_LEASE_SECONDS,
      meaning: "a run's lease lasts before another replica takes the run over",
    }),
    queueAffinitySeconds: secondsSetting(env, "AGENTCLI_QUEUE_AFFINITY_SECONDS", {
      default: DEFAULT_QUEUE_AFFINITY_SECONDS,
      meaning: "a run queued on a busy replica is kept for its workers before other replicas may take it",
    }),
    cors: corsFromEnv(env, mode),
    webhooks: webhooksFromEnv(env, mode),
    ttl: ttlFromEnv(env),
    heartbeatMs: secondsSetting(env, "AGENTCLI_STREAM_HEARTBEAT_SECONDS", {
      default: 15,
      meaning: "between keep-alive comments on an idle stream (0: none)",
    }) * 1000,
  };
}

/** `--sandbox <runtime>`, when given (with its warnings); else a warning when the provider's credentials are missing. */
async function sandboxRuntime(opts: HostOptions) {
  const runtime = opts.sandboxRuntime
    ? await (await import("../../harness/index.ts")).selectSandboxRuntime(
      opts.driver,
      opts.sandboxRuntime,
      opts.env,
    )
    : null;
  if (runtime) { for (const w of (await runtime.warnings?.({ env: opts.env })) ?? []) opts.log.warn(w); }
  if (!runtime) {
    const { sandboxCredentialWarning } = await import("../../harness/index.ts");
    const warning = sandboxCredentialWarning(opts.driver, opts.bundle.config.sandbox.provider, opts.env);
    if (warning && opts.mode === "serve") opts.log.warn(warning);
  }
  return runtime;
}

/** The sandboxes of the current bundle's [sandbox]; the mapping is in the server's database. */
async function sandboxManager(
  o: { opts: HostOptions; storage: Storage; runtime: string | null; current: { bundle: Bundle } },
) {
  const { opts } = o;
  const { SandboxManager } = await import("../../harness/index.ts");
  const sandboxDir = opts.env.AGENTCLI_SANDBOX_DIR
    ? resolve(opts.env.AGENTCLI_SANDBOX_DIR)
    : (opts.sandboxDir ?? `${opts.dataDir}-sandboxes`);
  return new SandboxManager({
    records: o.storage.sandboxes,
    driver: opts.driver,
    env: opts.env,
    runtime: o.runtime,
    host: { stateDir: sandboxDir, hiddenPaths: [opts.dataDir, sandboxDir, ...(opts.privatePaths ?? [])] },
    settings: () => o.current.bundle.config.sandbox,
    log: opts.log,
  });
}

/**
 * A LangGraph.js project's graph modules (with the `--graph` ones), the folder they load from,
 * its http.app and its UI components (`/ui`, served from the builds of the last start or reload).
 */
async function langGraphParts(opts: HostOptions) {
  const lg = opts.bundle.config.langgraph;
  if (!lg) return null;
  const { langGraphModules, loadLangGraphApp, writeProjectSources } = await import("./langgraph-project.ts");
  const { buildGraphUis, graphUiRoutes } = await import("./graph-ui.ts");
  const dir = opts.projectDir ?? await writeProjectSources(opts.bundle, `${opts.dataDir}-project`);
  const ui = { builds: {} as ReturnType<typeof buildGraphUis> };
  return {
    modules: { ...langGraphModules(lg, dir), ...opts.extraGraphs },
    roots: [dir],
    app: () => loadLangGraphApp(lg, dir),
    // dev (the sources in the project folder): a reload imports the changed graph modules anew.
    reimport: opts.projectDir
      ? async (bundle: Bundle) => {
        const next = bundle.config.langgraph!;
        renewSourceModules();
        const modules = { ...langGraphModules(next, dir), ...opts.extraGraphs };
        const graphs = await loadGraphModules(modules, { log: opts.log, roots: [dir] });
        ui.builds = buildGraphUis({ ui: next.ui ?? {}, dir, config: next.file });
        return graphs;
      }
      : null,
    graphUi: () => {
      ui.builds = buildGraphUis({ ui: lg.ui ?? {}, dir, config: lg.file });
      return graphUiRoutes(() => ui.builds);
    },
  };
}

export async function hostBundle(given: HostOptions): Promise<Host> {
  const lg = given.bundle.config.langgraph;
  // A LangGraph.js project: its store and checkpointer settings under the environment, its auth module.
  const opts: HostOptions = lg
    ? {
      ...given,
      // langgraph.json's env object is bundled; under serve it is not in the deployment's environment.
      env: { ...lg.settings, ...lg.env, ...given.env },
      ...(lg.auth && !given.langgraphAuth
        ? {
          langgraphAuth: {
            module: resolve(given.projectDir ?? `${given.dataDir}-project`, lg.auth.path),
            exportName: lg.auth.exportName,
            // LangGraph Studio's bypass trusts a header: under `dev` (loopback) only, as LangGraph's dev server.
            studioBypass: given.mode === "dev" && !lg.auth.disableStudioAuth,
          },
        }
        : {}),
    }
    : given;
  // LangGraph's server puts a project's env into process.env, where graph modules read it.
  if (lg) {
    for (const [k, v] of Object.entries(opts.env)) {
      if (process.env[k] === undefined && v !== undefined) process.env[k] = v;
    }
  }
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
