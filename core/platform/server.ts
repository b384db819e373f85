/**
 * Opens the control plane: storage (PostgreSQL from `databaseUrl`, embedded PGlite in
 * `dataDir` otherwise), migrations, the reconciler with its computes, and the HTTP app; and
 * optionally listens on a port. With `listen` it binds the port before anything else (a taken
 * port is a PORT_IN_USE user error naming --port, with nothing started or created); requests
 * that arrive while it starts wait until it is ready.
 *
 * @example
 * const platform = await openPlatform({ dataDir: "/var/lib/agentcli-platform", mode: "cloud" });
 * const { url } = await platform.listen({ port: 8080, host: "127.0.0.1" });
 * // ... later
 * await platform.close();
 */
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Hono } from "hono";
import { type AtRestEncryption, migrate, openSql, type SqlDriver } from "../storage/index.ts";
import { createPlatformApp } from "./api/app.ts";
import type { ProjectBuilders } from "./reconciler/build.ts";
import type { PlatformEnv, PlatformServices } from "./api/context.ts";
import { bundleToken, bundleUrl } from "./routes/bundles.ts";
import { DEFAULT_PLATFORM_LIMITS, type PlatformLimits } from "./api/limits.ts";
import { type Computes, openComputes } from "./compute/computes.ts";
import { PLATFORM_MIGRATIONS } from "./store/migrations.ts";
import { Reconciler } from "./reconciler/reconciler.ts";
import { packagesSweepSettings } from "./reconciler/packages-sweep.ts";
import { platformEncryption } from "./store/secrets-at-rest.ts";
import { CommandSessions } from "./sandboxes/commands.ts";
import process from "node:process";
import { type ComputeDriver, loadPlugins, type PluginDriver } from "../kernel/index.ts";
import { KubeClient } from "./compute/k8s-client.ts";
import { K8sBoxRuntime } from "./sandboxes/k8s.ts";
import { LocalBoxRuntime } from "./sandboxes/local.ts";
import { sandboxUpgrade } from "./sandboxes/ws.ts";
import { SandboxService } from "./store/sandboxes.ts";
import type { ListenerRow } from "./api/resources.ts";
import type { ListenSettings } from "../server/index.ts";
import type { PlatformMode } from "./api/source-rules.ts";
import type { AgentTemplate } from "./reconciler/templates.ts";
import { deleteDeploymentApiKeys, deploymentApiKey, getListenerById, setting } from "./store/tenancy.ts";

export interface PlatformOptions {
  /**
   * Bind this port first, before storage and revision processes (see the file comment).
   * `settings`: connection bounds and the `Host` allow-list (defaults: those of `listen` in
   * core/server/host/node.ts, strict on a loopback bind; the CLI reads them from the environment).
   */
  listen?: { port: number; host?: string; settings?: Partial<ListenSettings> };
  /** Folder for the embedded database, revision processes and work files. */
  dataDir: string;
  databaseUrl?: string;
  /**
   * Where `AGENTCLI_PLATFORM_SECRETS_KEY` (and `..._PREVIOUS_KEYS`) are read (default: the
   * process environment); without it the secrets key is generated into `dataDir`. The sweep of
   * unused npm package installs reads `AGENTCLI_PLATFORM_PACKAGES_KEEP_*` there too.
   */
  env?: Record<string, string | undefined>;
  mode?: PlatformMode;
  builders?: ProjectBuilders;
  /** Templates of `internal_template` (default: the builders' templates). */
  templates?: readonly AgentTemplate[];
  publicUrl?: string;
  /** Bounds of request bodies and uploads (default: `DEFAULT_PLATFORM_LIMITS`; the CLI reads them from the environment). */
  limits?: Partial<PlatformLimits>;
  /** Host the local listener binds revision processes and stable URLs to. */
  localHost?: string;
  /** Absolute paths of third-party plugin files that local revision processes load (see `LocalComputeOptions.plugins`). */
  plugins?: readonly string[];
  /** Test seam: the argv prefix that starts agentcli for local revision processes (default: this agentcli). */
  localCommand?: string[];
  /** Test seam: the compute for a listener (defaults: local processes, or `k8s`). */
  computeFor?: (listener: ListenerRow | null) => ComputeDriver;
  onError?: (err: unknown) => void;
  /** A line of what the control plane did on its own, such as an unused install removed (default: standard error). */
  log?: (line: string) => void;
  /** How often idle sandboxes are looked for (default 15 s; 0: never, for tests that call `sweep()`). */
  sandboxSweepMs?: number;
  /**
   * The plugins: those of kind `compute` run revisions (`compute-local`, `compute-k8s`), the local
   * sandbox runtime (`sandbox-local`) runs sandboxes on this machine (without them, none run here).
   */
  driver?: PluginDriver;
  /** How long to wait for a sandbox pod to run (tests). */
  sandboxK8sWait?: { waitAttempts?: number; waitIntervalMs?: number };
  /**
   * Reconcile timing (tests): lease lifetime, how often to poll for work, and how often to sweep
   * unused npm package installs (0: never, for tests that call the reconciler's `sweepPackages()`).
   */
  reconcile?: { leaseMs?: number; pollMs?: number; packagesSweepMs?: number };
}

export interface Platform {
  app: Hono<PlatformEnv>;
  services: PlatformServices;
  sql: SqlDriver;
  /** The computes the plugins gave, by listener type (inspection and tests). */
  computes: Computes;
  /** Where it listens when opened with `listen`. */
  listening: { url: string; port: number } | null;
  listen(opts: { port: number; host?: string }): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

type Fetch = (req: Request, ...rest: unknown[]) => Response | Promise<Response>;
type Upgrade = ReturnType<typeof sandboxUpgrade>;

/**
 * What the parts of the control plane read once it is open: the services (their `publicUrl`
 * may be set after it starts listening) and where revisions on this machine reach it.
 */
interface Late {
  services: PlatformServices | null;
  localUrl: string | null;
  upgrade: Upgrade | null;
}

/** The port bound first (`opts.listen`); requests wait on `ready` until the app exists. */
interface EarlyListener {
  url: string;
  port: number;
  ready: (fetch: Fetch) => void;
  /** Stops listening: waiting requests get a 503. */
  stop: () => Promise<void>;
}

export async function openPlatform(opts: PlatformOptions): Promise<Platform> {
  const cleanups: Array<() => Promise<void>> = [];
  /** Stops the HTTP listener opened with `opts.listen`: first, before what its requests use. */
  let stopListening = async () => {};
  const close = async () => {
    let first: unknown;
    for (const fn of [stopListening, ...cleanups.splice(0).reverse()]) await fn().catch((err) => (first ??= err));
    stopListening = async () => {};
    if (first) throw first;
  };
  const late: Late = { services: null, localUrl: null, upgrade: null };
  const early = opts.listen ? await listenEarly(opts.listen, late) : null;
  if (early) stopListening = early.stop;
  try {
    const sql = await openStore(opts);
    cleanups.push(() => sql.close());
    const onError = opts.onError ?? ((err: unknown) => console.error("platform:", err));
    const bundleSecret = await setting(sql, "bundle_secret", () => randomBytes(32).toString("hex"));
    const driver = opts.driver ?? await loadPlugins([]);
    const { computes, computeFor } = await startComputes(opts, { sql, driver, bundleSecret, late });
    cleanups.push(() => computes.close());
    const sandboxes = await openSandboxes(opts, { sql, onError, driver });
    cleanups.push(() => sandboxes.close());
    const encryption = await platformEncryption(opts.dataDir, opts.env ?? process.env);
    const reconciler = await openReconciler(opts, { sql, encryption, computeFor, onError, sandboxes, late, driver });
    cleanups.push(() => reconciler.close());
    const services: PlatformServices = {
      sql,
      encryption,
      mode: opts.mode ?? "cloud",
      templates: opts.templates ?? opts.builders?.templates ?? [],
      reconciler,
      computeTypes: computes.types,
      uploadSecret: await setting(sql, "upload_secret", () => randomBytes(32).toString("hex")),
      bundleSecret,
      publicUrl: opts.publicUrl,
      limits: { ...DEFAULT_PLATFORM_LIMITS, ...opts.limits },
      sandboxes,
      commands: new CommandSessions(),
    };
    late.services = services;
    late.upgrade = sandboxUpgrade(services, onError);
    const app = createPlatformApp(services, { onError });
    await reconciler.start();
    early?.ready(app.fetch as Fetch);
    return {
      app,
      services,
      sql,
      computes,
      listening: early ? { url: early.url, port: early.port } : null,
      close,
      listen: (at) => listenLater({ app, at, late, cleanups }),
    };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

/** Binds `opts.listen`'s port before anything else; requests wait until the app is ready. */
async function listenEarly(at: NonNullable<PlatformOptions["listen"]>, late: Late): Promise<EarlyListener> {
  let ready!: (fetch: Fetch) => void;
  const gate = new Promise<Fetch>((r) => (ready = r));
  const host = at.host ?? "127.0.0.1";
  const { listen } = await import("../server/index.ts");
  const l = await listen({ fetch: (req: Request, ...rest: unknown[]) => gate.then((f) => f(req, ...rest)) }, {
    ...at.settings,
    port: at.port,
    host,
    upgrade: (req, socket, head) => (late.upgrade ? late.upgrade(req, socket, head) : socket.destroy()),
  });
  late.localUrl = hostUrl(reachable(host), l.port);
  return {
    url: hostUrl(host, l.port),
    port: l.port,
    ready,
    // Requests still waiting when the start fails get a 503 (the listener closes right after).
    stop: async () => {
      ready(() => new Response("the control plane is stopping", { status: 503 }));
      await l.close();
    },
  };
}

/** The control plane's database, migrated: PostgreSQL from `databaseUrl`, else embedded in `dataDir`. */
async function openStore(opts: PlatformOptions): Promise<SqlDriver> {
  await mkdir(opts.dataDir, { recursive: true });
  const sql = await openSql(opts.databaseUrl ? { url: opts.databaseUrl } : { dataDir: join(opts.dataDir, "db") });
  try {
    await migrate(sql, "platform", PLATFORM_MIGRATIONS); // safe with replicas starting together
  } catch (err) {
    await sql.close().catch(() => {});
    throw err;
  }
  return sql;
}

/** The computes the `compute` plugins give (asked once, here), and the choice of one per listener. */
async function startComputes(
  opts: PlatformOptions,
  o: { sql: SqlDriver; driver: PluginDriver; bundleSecret: string; late: Late },
) {
  const computes = await openComputes({
    sql: o.sql,
    driver: o.driver,
    dataDir: opts.dataDir,
    host: opts.localHost ?? "127.0.0.1",
    databaseUrl: opts.databaseUrl ?? null,
    plugins: opts.plugins,
    command: opts.localCommand,
    // Reads `services.publicUrl` at rollout time (it may be set after the server starts listening).
    bundleAccess: (deploymentId, revisionId) =>
      o.late.services?.publicUrl
        ? {
          url: bundleUrl(o.late.services.publicUrl, deploymentId, revisionId),
          token: bundleToken(o.bundleSecret, deploymentId),
        }
        : null,
  });
  const computeFor = opts.computeFor ?? ((l: ListenerRow | null) => computes.for(l));
  return { computes, computeFor };
}

/** The sandbox API's sandboxes: on this machine (the `sandbox-local` runtime), or in a `k8s` listener's cluster. */
async function openSandboxes(
  opts: PlatformOptions,
  o: { sql: SqlDriver; onError: (err: unknown) => void; driver: PluginDriver },
): Promise<SandboxService> {
  const { sql } = o;
  return new SandboxService({
    sql,
    local: new LocalBoxRuntime({
      driver: o.driver,
      dataDir: opts.dataDir,
      env: sandboxEnv(),
    }),
    onError: o.onError,
    sweepMs: opts.sandboxSweepMs,
    onListener: async (listenerId) => {
      const l = await getListenerById(sql, listenerId);
      if (!l?.kubeconfig) {
        throw new Error(
          `listener ${listenerId} has no kubeconfig; run "agentcli platform admin set-kubeconfig --listener ${listenerId} --kubeconfig <file>"`,
        );
      }
      const namespace = (l.compute_config.k8s_namespaces as string[] | undefined)?.[0] ?? "default";
      return new K8sBoxRuntime({ kube: KubeClient.fromKubeconfig(l.kubeconfig), namespace, ...opts.sandboxK8sWait });
    },
  });
}

/** The reconciler, with what each revision is given (the control plane's address and a sandbox key) and its teardown. */
async function openReconciler(
  opts: PlatformOptions,
  o: {
    sql: SqlDriver;
    encryption: AtRestEncryption;
    computeFor: (listener: ListenerRow | null) => ComputeDriver;
    onError: (err: unknown) => void;
    sandboxes: SandboxService;
    late: Late;
    driver: PluginDriver;
  },
): Promise<Reconciler> {
  const { sql, late } = o;
  const sandboxKeySecret = await setting(sql, "sandbox_key_secret", () => randomBytes(32).toString("hex"));
  return new Reconciler({
    sql,
    encryption: o.encryption,
    dataDir: opts.dataDir,
    computeFor: o.computeFor,
    driver: o.driver,
    builders: opts.builders ?? {},
    onError: o.onError,
    shared: Boolean(opts.databaseUrl),
    leaseMs: opts.reconcile?.leaseMs,
    pollMs: opts.reconcile?.pollMs,
    packagesSweep: packagesSweepSettings(opts.env ?? process.env),
    packagesSweepMs: opts.reconcile?.packagesSweepMs,
    log: opts.log ?? ((line) => console.error(`platform: ${line}`)),
    // Revisions reach this control plane for their `platform` sandboxes: on the local listener
    // at its own address, on a cluster at --public-url (without one they get no address).
    platformEnv: async (d, listener) => {
      const publicUrl = late.services?.publicUrl;
      const url = listener?.compute_type === "k8s" ? publicUrl : (late.localUrl ?? publicUrl);
      // Spans of the deployment's runs go to its tracing project (spec 2.9: named after it).
      const project = { name: "AGENTCLI_TRACING_PROJECT", value: d.name };
      if (!url) return [project];
      return [project, { name: "AGENTCLI_PLATFORM_URL", value: url }, {
        name: "AGENTCLI_PLATFORM_SANDBOX_KEY",
        value: await deploymentApiKey(sql, sandboxKeySecret, d),
      }];
    },
    onTeardown: async (d) => {
      await o.sandboxes.deleteForDeployment(sql, d.id);
      await deleteDeploymentApiKeys(sql, d.id);
    },
  });
}

/** `Platform.listen`: serves the app on a port (when it was opened without `listen`). */
async function listenLater(
  o: { app: Hono<PlatformEnv>; at: { port: number; host?: string }; late: Late; cleanups: Array<() => Promise<void>> },
): Promise<{ url: string; port: number }> {
  const { port, host = "127.0.0.1" } = o.at;
  const { serve } = await import("@hono/node-server");
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: o.app.fetch, port, hostname: host }, () => resolve(s));
    s.once("error", reject);
  });
  server.on("upgrade", o.late.upgrade!);
  o.cleanups.push(() =>
    new Promise<void>((r) => {
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close(() => r());
    })
  );
  const address = server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  o.late.localUrl ??= hostUrl(reachable(host), actual);
  return { url: hostUrl(host, actual), port: actual };
}

/** The local runtime's settings (`AGENTCLI_SANDBOX_*` of this process); commands may print up to 16 MiB unless set. */
function sandboxEnv(): Record<string, string> {
  const env: Record<string, string> = { AGENTCLI_SANDBOX_OUTPUT_KB: "16384" };
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith("AGENTCLI_SANDBOX_") && v) env[k] = v;
  return env;
}

/** The address a process on this machine dials for a server bound to `host`. */
function reachable(host: string): string {
  return host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
}

function hostUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
