/**
 * Hosts a bundle: storage, the deep-agent graph, auth, the chat UI, the Agent API, and the
 * HTTP listener. `dev` and `serve` both run through here, so what runs in production is
 * what runs on a laptop.
 */
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import {
  type Env,
  type PluginDriver,
  redactProcessOutput,
  registerSecrets,
  secretValues,
  type ServerLog,
  userError,
} from "../../kernel/index.ts";
import { secondsSetting, switchSetting } from "../../config/index.ts";
import { corsFromEnv } from "../http/cors.ts";
import { ttlFromEnv, webhooksFromEnv } from "../../engine/index.ts";
import {
  DEFAULT_CONNECT_TIMEOUT_SECONDS,
  DEFAULT_DB_RETRY_SECONDS,
  DEFAULT_QUEUE_AFFINITY_SECONDS,
  DEFAULT_RUN_LEASE_SECONDS,
} from "../../storage/index.ts";
import { limitsFromEnv, type ServerLimits } from "../http/limits.ts";
import type { Bundle } from "../../bundle/index.ts";
import type { AgentServer } from "../app.ts";
import type { Listening } from "./node.ts";

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
}

/** A listener that answers `GET /ok` while the server behind it loads. */
export interface EarlyListener {
  listening: Listening;
  /** Hands every request to `fetch` (null: the server failed to start; waiting requests get a 503). */
  serve(fetch: ((req: Request) => Response | Promise<Response>) | null): void;
}

export interface Host {
  server: AgentServer;
  listening: Listening;
  /** Swaps in a new bundle (dev reload); threads, runs and memory are kept. */
  reload(bundle: Bundle, env: Env): Promise<string[]>;
  close(): Promise<void>;
}

/** A graph module named by `--graph`: where it is and which export (`graph`, then default, when absent). */
export interface GraphModule {
  path: string;
  exportName?: string;
}

/** The id of the project's agent graph. */
export const AGENT_GRAPH_ID = "agent";

/**
 * Parses repeated `--graph id=<module>[:<export>]` values. The id of the project's agent is
 * refused unless `replaceAgent` (`--replace-agent`); an id given twice is refused.
 */
export function parseGraphFlags(
  values: string[],
  cwd: string,
  opts: { replaceAgent?: boolean } = {},
): Record<string, GraphModule> {
  const out: Record<string, GraphModule> = {};
  for (const v of values) {
    const eq = v.indexOf("=");
    if (eq <= 0 || eq === v.length - 1) {
      throw userError("ARGS_INVALID", {
        message: `Cannot read --graph "${v}": expected <id>=<module path>[:<export>]`,
        hint: "Example: --graph echo=./graphs/echo.ts or --graph echo=./graphs/echo.ts:echoGraph",
      });
    }
    const id = v.slice(0, eq);
    const target = v.slice(eq + 1);
    if (Object.hasOwn(out, id)) {
      throw userError("ARGS_INVALID", {
        message: `Cannot serve --graph "${id}" twice`,
        hint: "Give each --graph its own id.",
      });
    }
    if (id === AGENT_GRAPH_ID && !opts.replaceAgent) {
      throw userError("ARGS_INVALID", {
        message: `Cannot serve --graph "${id}": that id is the project's agent`,
        hint: "Choose another id, or pass --replace-agent to serve this graph instead of the project's agent.",
      });
    }
    const m = /^(.+?):([A-Za-z_$][\w$]*)$/.exec(target);
    out[id] = m ? { path: resolve(cwd, m[1]!), exportName: m[2] } : { path: resolve(cwd, target) };
  }
  return out;
}

/**
 * Imports the `--graph` modules and checks each export is what langgraph.json accepts (a
 * compiled graph, a StateGraph, or a factory), so a wrong one stops the start with the
 * module and what it found rather than failing every run.
 */
export async function loadGraphModules(modules: Record<string, GraphModule>): Promise<Record<string, unknown>> {
  const { graphExportKind } = await import("../../engine/index.ts");
  const out: Record<string, unknown> = {};
  for (const [id, { path, exportName }] of Object.entries(modules)) {
    let mod: Record<string, unknown>;
    try {
      mod = await import(pathToFileURL(path).href);
    } catch (err) {
      throw userError("ARGS_INVALID", {
        message: `Cannot load --graph "${id}" from ${path}: ${(err as Error).message.split("\n")[0]}`,
        hint: "Check the module path and that the module loads (node <module>).",
      });
    }
    const name = exportName ?? ("graph" in mod ? "graph" : "default");
    const value = mod[name];
    const kind = graphExportKind(value);
    if (typeof kind === "object") {
      const exported = Object.keys(mod).map((k) => `"${k}"`).join(", ") || "nothing";
      throw userError("ARGS_INVALID", {
        message:
          `Cannot serve --graph "${id}": ${path} export "${name}" is ${kind.found}, not a graph (the module exports ${exported})`,
        hint:
          "Export a compiled graph, a StateGraph, or a (async) function taking the run config and returning one; name another export with <module>:<export>.",
      });
    }
    out[id] = value;
  }
  return out;
}

/** Default limit of one run's execution time (as LangGraph's servers: an hour). */
export const DEFAULT_RUN_TIMEOUT_SECONDS = 3600;

/** `AGENTCLI_RUN_TIMEOUT_SECONDS`: seconds a run may execute before it ends `timeout` (0: no limit). */
export function runTimeoutSeconds(env: Env): number {
  return secondsSetting(
    env,
    "AGENTCLI_RUN_TIMEOUT_SECONDS",
    DEFAULT_RUN_TIMEOUT_SECONDS,
    "a run may execute (0 for no limit)",
  );
}

/**
 * `AGENTCLI_CONNECT_TIMEOUT_SECONDS`: how long the start-up keeps trying to reach PostgreSQL
 * and Redis before it fails.
 */
export function connectTimeoutSeconds(env: Env): number {
  return secondsSetting(
    env,
    "AGENTCLI_CONNECT_TIMEOUT_SECONDS",
    DEFAULT_CONNECT_TIMEOUT_SECONDS,
    "the start-up keeps trying to reach PostgreSQL and Redis",
  );
}

/**
 * `dev` listens before anything else loads: `GET /ok` answers at once, and every other request
 * waits until the project is validated and storage, the Agent API and the UI are up (or gets
 * a 503 if they fail to start). A taken port is reported before any of that work.
 */
export async function listenFirst(opts: { port: number; host: string; env: Env }): Promise<EarlyListener> {
  const { listen } = await import("./node.ts");
  const { listenSettings } = await import("./listen-settings.ts");
  let handler: ((req: Request) => Response | Promise<Response>) | null = null;
  let started = false;
  const waiting: Array<() => void> = [];
  const listening = await listen({
    fetch: (req) => {
      if (handler) return handler(req);
      if ((req.method === "GET" || req.method === "HEAD") && new URL(req.url).pathname === "/ok") {
        return Response.json({ ok: true });
      }
      return new Promise<void>((r) => (started ? r() : waiting.push(r))).then(() =>
        handler
          ? handler(req)
          : Response.json({ detail: "Cannot serve the request: the server failed to start (see its log)" }, {
            status: 503,
          })
      );
    },
  }, { port: opts.port, host: opts.host, ...listenSettings(opts.env, { mode: "dev", bind: opts.host }) });
  return {
    listening,
    serve(fetch) {
      handler = fetch;
      started = true;
      for (const wake of waiting.splice(0)) wake();
    },
  };
}

export async function hostBundle(opts: HostOptions): Promise<Host> {
  const runTimeout = runTimeoutSeconds(opts.env);
  const limits = limitsFromEnv(opts.env);
  // Every secret the deployment holds is redacted from errors, streams, logs and tool results.
  registerSecrets(secretValues(opts.env, opts.bundle.manifest.secrets));
  redactProcessOutput();
  // Once handed over, the early listener is the host's: closed here if the server fails to start.
  const early = opts.early ?? null;
  try {
    return await start(opts, runTimeout, limits, early);
  } catch (err) {
    early?.serve(null);
    await early?.listening.close();
    throw err;
  }
}

/**
 * Behind an early listener the server's modules load in steps, with a turn of the event loop
 * between them, so `/ok` never waits behind one long synchronous evaluation of the whole
 * module graph (a module and its imports evaluate in one go). Literal imports, so the
 * executable's bundler sees them.
 */
async function loadInSteps(): Promise<void> {
  const turn = () => new Promise<void>((r) => setImmediate(r));
  await import("zod"), await turn();
  await import("@langchain/core/runnables"), await turn();
  await import("@langchain/langgraph-checkpoint"), await turn();
  await import("@electric-sql/pglite"), await turn();
  await import("../../storage/index.ts"), await turn();
  await import("@langchain/langgraph"), await turn();
  await import("hono"), await turn();
  await import("../app.ts"), await turn();
  await import("../../auth/index.ts"), await turn();
  await import("../protocols/routes.ts"), await turn();
}

async function start(
  opts: HostOptions,
  runTimeout: number,
  limits: Partial<ServerLimits>,
  early: EarlyListener | null,
): Promise<Host> {
  const { roleSetting, workersSetting } = await import("../../engine/index.ts");
  const role = roleSetting(opts.role, opts.env);
  const { listenSettings } = await import("./listen-settings.ts");
  const settings = listenSettings(opts.env, { mode: opts.mode, bind: opts.host }); // a bad value stops the start before anything opens
  workersSetting(opts.workers, opts.env, role); // a bad value stops the start before anything opens
  const shutdownMs = secondsSetting(
    opts.env,
    "AGENTCLI_SHUTDOWN_SECONDS",
    10,
    "a stopping replica finishes its runs before it hands them back",
  ) * 1000;
  const { sandboxIdleSeconds } = await import("../../harness/index.ts");
  sandboxIdleSeconds(opts.env);
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
  if (early) await loadInSteps();
  // Storage opens (a new database restores its template on the I/O threads) while the
  // server's modules load; the harness loads with the agent graph, on its first run.
  const dbUrl = opts.env.DATABASE_URL;
  const connectWithinMs = connectTimeoutSeconds(opts.env) * 1000;
  const encryption = (await import("../../storage/index.ts")).encryptionFromEnv(opts.env);
  const storeIndex = (await import("../../harness/index.ts")).storeIndexFromEnv(opts.env, opts.driver);
  // How long background work waits out a database restart (./storage/db-retry.ts).
  const dbRetryMs = secondsSetting(
    opts.env,
    "AGENTCLI_DB_RETRY_SECONDS",
    DEFAULT_DB_RETRY_SECONDS,
    "work waits for an unreachable PostgreSQL before it fails",
  ) * 1000;
  const pgPrepare = switchSetting(
    opts.env,
    "AGENTCLI_PG_PREPARED_STATEMENTS",
    true,
    "statements the server sends again are prepared by name on PostgreSQL (0 behind a pooler that cannot keep them, such as PgBouncer before 1.21 in transaction mode)",
  );
  const opening = import("../../storage/index.ts").then(({ openStorage }) =>
    openStorage(
      dbUrl
        ? {
          url: dbUrl,
          connect: { withinMs: connectWithinMs, variable: "DATABASE_URL" },
          retryMs: dbRetryMs,
          prepare: pgPrepare,
          encryption,
          storeIndex,
        }
        : { dataDir: opts.dataDir, encryption, storeIndex },
    )
  ).catch(async (err) => {
    const { DataDirLockedError } = await import("../../storage/index.ts");
    if (opts.mode !== "dev" || !(err instanceof DataDirLockedError)) throw err;
    // dev has no --data-dir: the project's database is its own.
    throw new DataDirLockedError(
      err.dir,
      err.pid,
      `Another "agentcli dev" (or serve) of this project is running (pid ${err.pid}): use that one, or stop it first. To run several servers on one project's data, set DATABASE_URL to a PostgreSQL database.`,
    );
  });
  opening.catch(() => {});
  const [
    { createAgentServer },
    { listen },
    { createAuthenticator, identityPluginFor },
    ui,
    { protocolRoutes },
    { VERSION },
  ] = await Promise.all([
    import("../app.ts"),
    import("./node.ts"),
    import("../../auth/index.ts"),
    import("../routes/ui.ts"),
    import("../protocols/routes.ts"),
    import("../../kernel/index.ts"),
  ]).catch(async (err) => {
    await opening.then((s) => s.close(), () => {});
    throw err;
  });
  const extra = await loadGraphModules(opts.extraGraphs ?? {}).catch(async (err) => {
    await opening.then((s) => s.close(), () => {});
    throw err;
  });
  const storage = await opening;
  // Sandboxes of the current bundle's [sandbox]; the mapping is in the server's database.
  let current = opts.bundle;
  const { SandboxManager } = await import("../../harness/index.ts");
  const sandboxDir = opts.env.AGENTCLI_SANDBOX_DIR
    ? resolve(opts.env.AGENTCLI_SANDBOX_DIR)
    : (opts.sandboxDir ?? `${opts.dataDir}-sandboxes`);
  const sandboxes = new SandboxManager({
    records: storage.sandboxes,
    driver: opts.driver,
    env: opts.env,
    runtime: runtime?.name ?? null,
    host: { stateDir: sandboxDir, hiddenPaths: [opts.dataDir, sandboxDir, ...(opts.privatePaths ?? [])] },
    settings: () => current.config.sandbox,
    log: opts.log,
  });
  const live: Array<{ close(): Promise<void> }> = [];
  // MCP connections live as long as the host: a reload keeps those its new graph still uses.
  const { mcpPool } = await import("../../harness/index.ts");
  const mcp = mcpPool();
  const loaders = (bundle: Bundle, env: Env) => {
    const graphs: Record<string, () => Promise<unknown>> = {
      agent: async () => {
        const { createAgentGraph } = await import("../../harness/index.ts");
        const workdir = runtime
          ? runtime.workdir
          : opts.driver.spec("sandbox", bundle.config.sandbox.provider)?.workdir;
        const g = await createAgentGraph({
          bundle,
          driver: opts.driver,
          env,
          checkpointer: storage.checkpointer,
          store: storage.store,
          log: opts.log,
          sandboxes,
          sandboxWorkdir: workdir,
          mcp,
        });
        live.push(g);
        await mcp.sweep();
        for (const w of g.warnings) opts.log.warn(w);
        return g.graph;
      },
    };
    for (const [id, value] of Object.entries(extra)) graphs[id] = async () => value;
    return graphs;
  };
  const assistants = (bundle: Bundle) => ({
    agent: { name: bundle.config.agent.name, description: bundle.config.agent.description },
  });
  // MCP and A2A read the current bundle, so a dev reload shows in the tools and the cards.
  const provider = opts.bundle.config.auth?.provider ?? null;
  // The configured provider's plugin: its sign-in kind for the protocol cards, its browser module for the chat UI.
  let identityPlugin: ReturnType<typeof identityPluginFor> | null = null;
  const protocols = () =>
    protocolRoutes({
      version: VERSION,
      name: opts.bundle.config.agent.name,
      auth: identityPlugin?.identity.signIn === "none" ? "none" : identityPlugin ? "bearer" : "api-key",
      defaultAssistant: () => current.config.agent.name,
      skills: (a) => (a.graph_id === "agent"
        ? current.config.skills.map((s) => ({ name: s.name, description: s.description }))
        : []),
    });
  // OpenTelemetry only when the OTEL_* variables ask for it (the SDK loads then).
  const tracer = await (await import("../../engine/index.ts")).runTracerFromEnv(opts.env, {
    agent: opts.bundle.config.agent.name,
  });
  const idle = await (await import("../../engine/index.ts")).idleCollector({ env: opts.env });
  let server: AgentServer;
  try {
    identityPlugin = provider === null ? null : identityPluginFor(opts.driver, provider);
    const uiIdentity = identityPlugin ? { name: identityPlugin.name, ...identityPlugin.identity } : null;
    server = await createAgentServer({
      tracer,
      idle,
      graphs: loaders(opts.bundle, opts.env),
      defaultAssistants: assistants(opts.bundle),
      storage,
      authenticate: createAuthenticator({
        driver: opts.driver,
        config: opts.bundle.config,
        env: opts.env,
        mode: opts.mode,
      }),
      ui: opts.bundle.config.frontend.enabled || opts.mode === "dev"
        ? ui.uiRoutes({
          settings: ui.uiSettings(opts.bundle.config, opts.env, { identity: uiIdentity }),
          identity: uiIdentity,
          log: opts.log,
        })
        : undefined,
      extraRoutes: protocols(),
      log: opts.log,
      redisUrl: opts.env.REDIS_URL,
      databaseUrl: dbUrl,
      connectWithinMs,
      runTimeoutSeconds: runTimeout,
      role,
      workers: workersSetting(opts.workers, opts.env, role),
      runLeaseSeconds: secondsSetting(
        opts.env,
        "AGENTCLI_RUN_LEASE_SECONDS",
        DEFAULT_RUN_LEASE_SECONDS,
        "a run's lease lasts before another replica takes the run over",
      ),
      queueAffinitySeconds: secondsSetting(
        opts.env,
        "AGENTCLI_QUEUE_AFFINITY_SECONDS",
        DEFAULT_QUEUE_AFFINITY_SECONDS,
        "a run queued on a busy replica is kept for its workers before other replicas may take it",
      ),
      limits,
      info: { agent: opts.bundle.config.agent.name, mode: opts.mode },
      onThreadDeleted: (threadId) => sandboxes.deleteThread(threadId),
      cors: corsFromEnv(opts.env, opts.mode),
      webhooks: webhooksFromEnv(opts.env, opts.mode),
      ttl: ttlFromEnv(opts.env),
      heartbeatMs: secondsSetting(
        opts.env,
        "AGENTCLI_STREAM_HEARTBEAT_SECONDS",
        15,
        "between keep-alive comments on an idle stream (0: none)",
      ) * 1000,
    });
  } catch (err) {
    await tracer?.close().catch(() => {});
    await sandboxes.close();
    await storage.close();
    throw err;
  }
  let listening: Listening;
  try {
    if (early) {
      // The project's .env may list more host names than the environment dev started in.
      early.listening.allowHosts(settings.allowedHosts);
      early.serve(server.fetch);
      listening = early.listening;
    } else listening = await listen(server, { port: opts.port, host: opts.host, log: opts.log, ...settings });
  } catch (err) {
    await server.close();
    await sandboxes.close();
    await storage.close();
    throw err;
  }
  const closeGraphs = async () => {
    const old = live.splice(0);
    await Promise.allSettled(old.map((g) => g.close()));
  };
  return {
    server,
    listening,
    async reload(bundle, env) {
      await closeGraphs();
      current = bundle;
      await server.reloadGraphs(loaders(bundle, env), assistants(bundle));
      return [];
    },
    async close() {
      // Reverse order of setup; a failure in one step never skips the next.
      await listening.close().catch((e) => opts.log.error(`closing the listener: ${(e as Error).message}`));
      await server.close({ graceMs: shutdownMs }).catch((e) =>
        opts.log.error(`stopping the server: ${(e as Error).message}`)
      );
      await closeGraphs();
      await mcp.close();
      await sandboxes.close().catch(() => {});
      await storage.close().catch(() => {});
    },
  };
}
