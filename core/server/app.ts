/**
 * The agent server: the LangGraph-Platform-compatible Agent API (assistants, threads, runs,
 * store, SSE streaming, interrupts) on Web standards with Hono, its storage, the durable run
 * queue and its workers. Runtime adapters (Node, Deno) only call `server.fetch`.
 *
 * @example
 * const server = await createAgentServer({ graphs: { agent: async () => graph }, storage: { dataDir: ".agentcli/db" } });
 * const res = await server.app.request("/ok");
 * await server.close();
 */
import { Hono } from "hono";
import { type AuthUser, consoleLog, redactingLog, type ServerLog } from "../kernel/index.ts";
import type { CorsSettings } from "./http/cors.ts";
import type { AppEnv } from "./http/auth-middleware.ts";
import { type LangGraphAuthSpec, loadLangGraphAuth, withLangGraphAuth } from "./http/langgraph-auth.ts";
import { langgraphAuthMiddleware } from "./http/langgraph-auth-events.ts";
import type { Storage, StorageOptions } from "../storage/index.ts";
import {
  CronScheduler,
  DEFAULT_QUEUE_AFFINITY_SECONDS,
  DEFAULT_TTL,
  DEFAULT_WEBHOOKS,
  type GraphLoaders,
  GraphRegistry,
  type IdleCollector,
  LocalTraces,
  type Prices,
  type Resolver,
  RunBroker,
  RunService,
  type RunTracer,
  type ServerRole,
  type TtlSettings,
  TtlSweeper,
  type UsageLimits,
  UsageMeter,
  WebhookSender,
  type WebhookSettings,
  WorkerPool,
} from "../engine/index.ts";
import type { ServerDeps } from "./deps.ts";
import { DEFAULT_LIMITS, type ServerLimits } from "./http/limits.ts";
import { type DefaultAssistant, type DisabledRoutes, ensureAssistants } from "./default-assistants.ts";
import { openStorageAndBus } from "./storage-bus.ts";
import { mountGuards } from "./mounts/guards.ts";
import { mountPublic } from "./mounts/public.ts";
import { mountApi } from "./mounts/api.ts";

export { type DefaultAssistant, defaultAssistantId, type DisabledRoutes } from "./default-assistants.ts";

export interface AgentServerOptions {
  /** Graphs by id, loaded on first use. */
  graphs: GraphLoaders;
  /** Name (and description) of each graph's default assistant; its id is the uuid v5 of the name. Default: the graph id. */
  defaultAssistants?: Record<string, DefaultAssistant>;
  /** An open storage, or where to open one (embedded in memory when absent). */
  storage?: Storage | StorageOptions;
  /** Identifies the caller; throw a 401 `AgentcliError` to refuse; null means no user. */
  authenticate?: (req: Request) => Promise<AuthUser | null>;
  /** LangGraph custom auth (`auth.path`): its `authenticate` after `authenticate`'s, its `on` handlers per route. */
  langgraphAuth?: LangGraphAuthSpec;
  /** The chat UI, mounted at `/app`. */
  ui?: Hono;
  /** The studio, mounted at `/studio` (./routes/studio.ts). */
  studio?: Hono;
  /** A LangGraph.js project's generative UI components, mounted at `/ui` (public: scripts load without headers). */
  graphUi?: Hono;
  /** Other components (MCP, A2A, well-known documents); `app` may be built from the server's deps. */
  extraRoutes?: Array<{ path: string; app: Hono<any> | ((deps: ServerDeps) => Hono<any>) }>;
  /** Route groups switched off (langgraph.json's `http.disable_*`). */
  disable?: DisabledRoutes;
  /** Runs executed at once by this process (default 8; 0 with role `api`). */
  workers?: number;
  /** What this replica does (../engine/queue/roles.ts): `api` runs nothing, `worker` serves only /ok and /info. Default `all`. */
  role?: ServerRole;
  /**
   * Seconds a run's lease lasts (default 10, `AGENTCLI_RUN_LEASE_SECONDS`): a replica that dies
   * mid-run has its runs taken over by another this long after its last renewal.
   */
  runLeaseSeconds?: number;
  /**
   * Seconds a run queued on this replica while its workers are all busy is kept for them
   * before the other replicas may take it (default 0.3, `AGENTCLI_QUEUE_AFFINITY_SECONDS`;
   * 0: any replica at once). Shared database only.
   */
  queueAffinitySeconds?: number;
  /** A run executing longer than this ends with status `timeout` (default: no limit). */
  runTimeoutSeconds?: number;
  /** Request bodies larger than this are refused with a 413 (default {@link DEFAULT_MAX_BODY_BYTES}; overrides `limits.maxBodyBytes`). */
  maxBodyBytes?: number;
  /** Input bounds and per-user run quotas (defaults: {@link DEFAULT_LIMITS}). */
  limits?: Partial<ServerLimits>;
  log?: ServerLog;
  /** A Redis connection string: cross-replica wake-ups, streaming and cancellation. */
  redisUrl?: string;
  /**
   * The PostgreSQL connection string of `storage` when it is given opened: without
   * `redisUrl`, the cross-replica signals go over its `LISTEN/NOTIFY`.
   */
  databaseUrl?: string;
  /** How long to keep trying to reach Redis at start (default: one attempt). */
  connectWithinMs?: number;
  /** Extra fields for `GET /info`. */
  info?: Record<string, unknown>;
  /** Origins allowed to call from a browser (./http/cors.ts `corsFromEnv`); none when absent. */
  cors?: CorsSettings;
  /** Milliseconds between `: heartbeat` comments on an idle SSE stream (default 15000; 0: none). */
  heartbeatMs?: number;
  /** Told when a thread is deleted, to delete its sandbox (../harness/sandbox/manager.ts). */
  onThreadDeleted?: (threadId: string) => Promise<void>;
  /** The longest the cron scheduler sleeps between looks for due crons (default 10000 ms). */
  cronPollMs?: number;
  /** Run webhooks (../engine/runs/webhooks.ts `webhooksFromEnv`); default: no signature, private targets refused. */
  webhooks?: Partial<WebhookSettings>;
  /** How webhook hosts are resolved (default: the system's `dns.lookup`); tests answer as a rebinding DNS server would. */
  webhookResolver?: Resolver;
  /** Traces every run (../engine/tracing/tracing.ts `runTracerFromEnv`); flushed and shut down on close. */
  tracer?: RunTracer | null;
  /** Default TTLs, the stream retention and the sweep period (../engine/queue/ttl-sweeper.ts `ttlFromEnv`); default: nothing but stream logs (after 300 s) expires without its own `ttl`, sweeps every 60 s. */
  ttl?: Partial<TtlSettings>;
  /** Usage recording (`false`: none, nor limits), its budgets and prices (default: recorded, no limits, no prices). */
  usage?: { limits?: UsageLimits; prices?: Prices; ownerKey?: string | null; addressHeader?: string | null } | false;
  /** Collects garbage when no run executes (../engine/queue/idle-gc.ts `idleCollector`; `dev` and `serve` pass one). */
  idle?: IdleCollector;
}

export interface AgentServer {
  readonly app: Hono<AppEnv>;
  readonly fetch: (req: Request, ...runtime: unknown[]) => Response | Promise<Response>;
  readonly storage: Storage;
  /** Swaps the graphs (dev reload); threads and runs are kept. */
  reloadGraphs(graphs: GraphLoaders, defaultAssistants?: Record<string, DefaultAssistant>): Promise<void>;
  /**
   * Runs executing on graphs that already finished a run in this process (module loading
   * and first-use work are behind them), executing now and started ever: what the dev
   * blocking monitor watches.
   */
  warmRuns(): { active: number; started: number };
  /** Deletes the threads, store items and stream logs that have expired now (the sweeper does this periodically). */
  sweepExpired(): Promise<{ threads: string[]; items: number; streams: number }>;
  /** Stops the workers (finishing or interrupting in-flight runs), then closes storage. */
  close(opts?: { graceMs?: number }): Promise<void>;
}

/** Default limit of a request body: 25 MiB. */
export const DEFAULT_MAX_BODY_BYTES = DEFAULT_LIMITS.maxBodyBytes;

/** Creates the agent server; storage is opened and migrated, workers started. */
export async function createAgentServer(opts: AgentServerOptions): Promise<AgentServer> {
  const log = redactingLog(opts.log ?? consoleLog());
  // Before anything opens: an auth module that does not load stops the start with nothing to close.
  const lgAuth = opts.langgraphAuth ? await loadLangGraphAuth(opts.langgraphAuth) : null;
  const role: ServerRole = opts.role ?? "all";
  const { storage, ownStorage, remote } = await openStorageAndBus(opts, log);
  if (opts.runLeaseSeconds && opts.runLeaseSeconds > 0) storage.runs.leaseSeconds = opts.runLeaseSeconds;
  const broker = new RunBroker({ log: storage.events, remote, exclusive: storage.kind === "pglite" });
  const graphs = new GraphRegistry(opts.graphs, { checkpointer: storage.checkpointer, store: storage.store });
  const limits: ServerLimits = {
    ...DEFAULT_LIMITS,
    ...opts.limits,
    ...(opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {}),
  };
  const webhooks = new WebhookSender({ ...DEFAULT_WEBHOOKS, ...opts.webhooks }, {
    storage,
    log,
    resolve: opts.webhookResolver,
  });
  const ttl: TtlSettings = { ...DEFAULT_TTL, ...opts.ttl };
  const traces = new LocalTraces({ retentionSeconds: ttl.traceRetentionSeconds });
  const usage = opts.usage === false ? null : new UsageMeter({ store: storage.usage, log, ...opts.usage });
  const workers = new WorkerPool({
    storage,
    broker,
    graphs,
    log,
    concurrency: role === "api" ? 0 : opts.workers ?? 8,
    exclusive: storage.kind === "pglite",
    runTimeoutMs: (opts.runTimeoutSeconds ?? 0) * 1000,
    maxRunningPerOwner: limits.maxRunningPerOwner,
    onThreadDeleted: opts.onThreadDeleted,
    webhooks,
    tracer: opts.tracer ?? null,
    traces,
    usage,
    idle: opts.idle,
    affinitySeconds: opts.queueAffinitySeconds ?? DEFAULT_QUEUE_AFFINITY_SECONDS,
  });
  const deps: ServerDeps = {
    storage,
    runs: new RunService({ storage, broker, graphs, workers, limits, webhooks, usage }),
    usage,
    graphs,
    log,
    limits,
    onThreadDeleted: opts.onThreadDeleted,
    heartbeatMs: opts.heartbeatMs ?? 15_000,
    ttl,
    traces,
  };

  const crons = new CronScheduler(deps, { pollMs: opts.cronPollMs });
  const sweeper = new TtlSweeper(deps, deps.ttl);

  await ensureAssistants(storage, graphs.ids(), opts.defaultAssistants);

  const app = new Hono<AppEnv>();
  mountGuards(app, { log, cors: opts.cors, limits });
  mountPublic(app, {
    opts,
    info: {
      graphs: () => graphs.ids(),
      storage: storage.kind,
      redis: Boolean(remote),
      role,
      encryption: storage.encryption ? { at_rest: "aes-gcm", json_keys: [...storage.encryption.jsonKeys] } : null,
      store_search: await storage.store.searchMode(),
    },
    log,
  });
  const authenticate = lgAuth ? withLangGraphAuth(lgAuth, opts.authenticate) : opts.authenticate;
  const authorize = lgAuth ? langgraphAuthMiddleware(lgAuth, deps) : undefined;
  mountApi(app, { authenticate, authorize, extraRoutes: opts.extraRoutes ?? [], deps, crons, disable: opts.disable });

  await workers.start();
  crons.start();
  sweeper.start();
  let closed = false;
  return {
    app,
    // The runtime's values (the Node adapter's socket, Deno's remote address) go on: usage limits read the client's address.
    fetch: (req, ...rest: unknown[]) => app.fetch(req, ...(rest as [])),
    storage,
    warmRuns: () => graphs.warmRuns(),
    sweepExpired: () => sweeper.sweep(),
    async reloadGraphs(loaders, defaults) {
      graphs.replace(loaders);
      await ensureAssistants(storage, graphs.ids(), defaults ?? opts.defaultAssistants);
    },
    async close(closeOpts) {
      if (closed) return;
      closed = true;
      await crons.stop();
      await sweeper.stop();
      await workers.stop(closeOpts?.graceMs);
      await webhooks.stop();
      await broker.close();
      await opts.tracer?.close().catch((err) =>
        log.warn(`tracing: the last spans could not be exported: ${(err as Error).message}`)
      );
      if (ownStorage) await storage.close();
    },
  };
}
