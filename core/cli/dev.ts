/**
 * `agentcli dev [--config <path>] [--port <int>] [--host <addr>] [--allow-blocking]`: bundle
 * the project and serve it locally through the same code as `serve`, reloading when project
 * files change (threads and memory are kept) and reporting config errors without dying.
 */
import { chmodSync, type FSWatcher, mkdirSync, readdirSync, statSync, watch } from "node:fs";
import { join, relative } from "node:path";
import { formatUserError, isUserError, type PluginDriver, type ServerLog } from "../kernel/index.ts";
import type { LoadedProject } from "../config/index.ts";
import type { Bundle } from "../bundle/index.ts";
import {
  type CommandSpec,
  CONFIG_FLAG,
  type FlagSpec,
  GRAPH_FLAG,
  hostFlag,
  parseArgs,
  portFlag,
  renderHelp,
  REPLACE_AGENT_FLAG,
  SANDBOX_FLAG,
} from "./args.ts";
import type { CliContext } from "./context.ts";
import type { GraphModule, Host } from "../server/index.ts";

const spec = {
  name: "dev",
  usage:
    "agentcli dev [--config <path>] [--port <int>] [--host <addr>] [--allow-blocking] [--graph <id>=<module>[:<export>]] [--replace-agent] [--sandbox <runtime>]",
  summary:
    "Bundle the project and run it locally: the Agent API, and the chat UI at /app. Reloads when project files change.",
  flags: {
    config: CONFIG_FLAG,
    port: portFlag(2024),
    host: hostFlag("127.0.0.1"),
    allowBlocking: {
      type: "boolean",
      description: "Do not warn when a run blocks the event loop (synchronous work in tools or graphs)",
    },
    graph: GRAPH_FLAG,
    sandbox: SANDBOX_FLAG,
    replaceAgent: REPLACE_AGENT_FLAG,
  },
} satisfies CommandSpec<Record<string, FlagSpec>>;

/** Event-loop stalls longer than this are reported (unless --allow-blocking). */
const BLOCKING_THRESHOLD_MS = 250;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  // Listen first: `/ok` answers at once, and a taken port is reported before any other work.
  // Other requests wait while the project is validated and the server loads behind it.
  // Only the listener's module loads first (a public module of server/: server/index.ts would load
  // the whole server before the port is bound); the host and the tools load behind it.
  const { listenFirst } = await import("../server/host/early.ts");
  const early = await listenFirst({ port: flags.port as number, host: flags.host as string, env: ctx.env });
  const { hostBundle, parseGraphFlags } = await import("../server/index.ts");
  const tools = await loadTools().catch(async (err) => {
    await early.listening.close();
    throw err;
  });
  const log = tools.consoleLog("dev");
  const sandboxRuntime = (flags.sandbox as string | undefined) ?? null;
  let start: Awaited<ReturnType<typeof startProject>>;
  try {
    start = await startProject(ctx, {
      tools,
      configPath: flags.config as string,
      extraGraphs: () =>
        parseGraphFlags(flags.graph as string[], ctx.cwd, { replaceAgent: Boolean(flags.replaceAgent) }),
    });
  } catch (err) {
    early.serve(null);
    await early.listening.close();
    throw err;
  }
  const { project, bundle, driver, build } = start;
  const report = (p: LoadedProject) => reportProject(p, { log, sandboxRuntime, cwd: ctx.cwd, tools });
  report(project);
  const host = await hostBundle({
    bundle,
    driver,
    env: project.env,
    mode: "dev",
    dataDir: start.dataDir,
    port: flags.port as number,
    host: flags.host as string,
    log,
    extraGraphs: start.extraGraphs,
    sandboxRuntime,
    sandboxDir: join(project.root, ".agentcli", "sandboxes"),
    privatePaths: [project.root],
    early,
    ...(project.config.langgraph ? { projectDir: project.root } : {}),
  });
  const stopMonitor = flags.allowBlocking ? () => {} : monitorBlocking(log, () => host.server.warmRuns());
  const reloads = reloadOnChange({ build, report, host, log });
  // Watch first, then say so: a change saved right after the banner is never missed.
  const watcher = watchProject(project.root, reloads.onChange);
  await printBanner(ctx, { host, project, bundle, driver, log });
  await new Promise<void>((resolve) => {
    if (ctx.shutdownSignal.aborted) return resolve();
    ctx.shutdownSignal.addEventListener("abort", () => resolve(), { once: true });
  });
  ctx.io.err("agentcli dev: shutting down...");
  reloads.cancel();
  watcher.close();
  stopMonitor();
  await reloads.settled();
  await host.close();
  return 0;
}

/** What dev loads after it listens: one import at a time with a turn of the event loop between, so `/ok` is answered in the gaps. */
async function loadTools() {
  const turn = () => new Promise<void>((r) => setImmediate(r));
  const { loadPlugins } = await import("../kernel/index.ts");
  await turn();
  const { loadProject } = await import("../config/index.ts");
  await turn();
  const { buildBundle, readBundle } = await import("../bundle/index.ts");
  const { consoleLog } = await import("../kernel/index.ts");
  const { describeMissing } = await import("../config/index.ts");
  return { loadPlugins, loadProject, buildBundle, readBundle, consoleLog, describeMissing };
}

type Tools = Awaited<ReturnType<typeof loadTools>>;
type Build = () => Promise<{ project: LoadedProject; bundle: Bundle }>;

/**
 * Loads the plugins and the project, bundles it (`build`, called again on each reload), and
 * readies the data folder; a new project's database is restored from its template meanwhile.
 */
async function startProject(
  ctx: CliContext,
  opts: { tools: Tools; configPath: string; extraGraphs: () => Record<string, GraphModule> },
) {
  const { tools } = opts;
  const extraGraphs = opts.extraGraphs();
  const driver = await tools.loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  const build: Build = async () => {
    const project = await tools.loadProject(opts.configPath, { driver, env: ctx.env, requireEnv: false, cwd: ctx.cwd });
    const { bytes } = await tools.buildBundle(project, { driver, version: ctx.version });
    return { project, bundle: await tools.readBundle(bytes) };
  };
  const { project, bundle } = await build();
  const dataDir = join(project.root, ".agentcli", "db");
  openDataFolder(join(project.root, ".agentcli"));
  if (!project.env.DATABASE_URL) {
    const { prepareDataDir, SERVER_TEMPLATE } = await import("../storage/index.ts");
    void prepareDataDir(dataDir, SERVER_TEMPLATE);
  }
  return { project, bundle, driver, build, dataDir, extraGraphs };
}

/** The project's warnings and missing variables, each a log line. */
function reportProject(
  p: LoadedProject,
  opts: { log: ServerLog; sandboxRuntime: string | null; cwd: string; tools: Tools },
): void {
  const { log, sandboxRuntime: runtime, tools } = opts;
  for (const w of p.warnings) log.warn(`${w.file}${w.line ? `:${w.line}` : ""}: ${w.message}`);
  // --sandbox <runtime> runs the sandboxes instead of the [sandbox] provider: its keys are not needed here.
  for (const m of p.missingEnv) {
    if (runtime && m.sandbox) {
      log.info(
        `--sandbox ${runtime} runs the sandboxes: ${
          tools.describeMissing(m)
        } is not needed by dev (deploy refuses without it)`,
      );
    } else {
      log.warn(
        `${tools.describeMissing(m, "sentence")}: runs will fail until you add it to ${
          relative(opts.cwd, join(p.root, ".env")) || ".env"
        } (deploy refuses without it)`,
      );
    }
  }
}

/**
 * Rebuilds and reloads the server 150 ms after the last change to a project file (not hidden
 * folders but .env); a project error is logged and the last good version keeps serving.
 */
function reloadOnChange(opts: { build: Build; report: (p: LoadedProject) => void; host: Host; log: ServerLog }) {
  const { build, report, host, log } = opts;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reloading = Promise.resolve();
  const onChange = (file: string | null) => {
    if (file && (file.startsWith(".agentcli") || file.split("/").some((s) => s.startsWith(".") && s !== ".env"))) {
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(() => {
      reloading = reloading.then(async () => {
        try {
          const next = await build();
          report(next.project);
          await host.reload(next.bundle, next.project.env);
          log.info(`reloaded after a change${file ? ` to ${file}` : ""}; threads and memory are kept`);
        } catch (err) {
          if (!isUserError(err)) throw err;
          // Not the one-shot "run the command again" hint: dev keeps serving and reloads on save.
          const hint = err.code === "CONFIG_INVALID" ? null : err.hint;
          log.error(
            `${
              formatUserError(err, { label: false, hint })
            }\nStill serving the last good version; fix the project and save to reload.`,
          );
        }
      }).catch((err) => log.error("reload failed", err));
    }, 150);
  };
  return { onChange, cancel: () => clearTimeout(timer), settled: () => reloading };
}

/** Where dev serves (API, UI, docs, data) and, when the project has one, its auth banner. */
async function printBanner(
  ctx: CliContext,
  opts: { host: Host; project: LoadedProject; bundle: Bundle; driver: PluginDriver; log: ServerLog },
): Promise<void> {
  const { host, project, bundle, driver } = opts;
  const shownHost = host.listening.host.includes(":") ? `[${host.listening.host}]` : host.listening.host;
  const base = `http://${shownHost}:${host.listening.port}`;
  const lg = bundle.config.langgraph;
  const served = lg
    ? `graphs ${Object.keys(lg.graphs).map((g) => `"${g}"`).join(", ")} of ${lg.file}`
    : `assistant "${bundle.config.agent.name}", graph "agent"`;
  ctx.io.out(`agentcli dev: "${bundle.config.agent.name}" is running
  API:  ${base}   (${served})
  UI:   ${base}/app
  Studio: ${base}/studio${
    /^(0|false|no|off)$/i.test(project.env.AGENTCLI_STUDIO?.trim() ?? "") ? " (off: AGENTCLI_STUDIO)" : ""
  }
  Docs: ${base}/openapi.json
  Data: ${relative(ctx.cwd, join(project.root, ".agentcli")) || ".agentcli"}${
    project.env.DATABASE_URL ? " (PostgreSQL from DATABASE_URL)" : ""
  }
Watching ${relative(ctx.cwd, project.root) || "."} for changes. Press Ctrl+C to stop.`);
  const { devAuthBanner } = await import("../auth/index.ts");
  const authProvider = bundle.config.auth?.provider ?? null;
  const banner = devAuthBanner({
    config: bundle.config,
    env: project.env,
    mode: "dev",
    identity: (authProvider === null ? undefined : driver.spec("identity", authProvider)) ?? null,
  });
  if (banner) opts.log.info(banner);
}

/**
 * Warns when the event loop stalls while a run executes (a run doing long synchronous work
 * blocks every request). Only runs of a graph that already finished a run count: loading a
 * graph's modules (its first run, or after a reload) and starting the server are not runs'
 * doing. `running` says whether such runs execute now. A stall counts only when the main thread
 * itself ran for at least half the threshold meanwhile (where the runtime can tell).
 */
export function monitorBlocking(
  log: { warn(m: string): void },
  runs: () => { active: number; started: number },
  thresholdMs = BLOCKING_THRESHOLD_MS,
): () => void {
  const interval = 100;
  // The main thread's own CPU time (Node 22.19+; absent under Deno): a stall in which the thread
  // barely ran was the machine (other processes, a busy CI runner), not synchronous work here.
  const threadCpu = typeof process.threadCpuUsage === "function"
    ? () => {
      const u = process.threadCpuUsage();
      return (u.user + u.system) / 1000;
    }
    : null;
  let last = performance.now();
  let lastCpu = threadCpu?.() ?? 0;
  let lastWarned = -Infinity;
  let before = runs();
  const t = setInterval(() => {
    const now = performance.now();
    const lag = now - last - interval;
    last = now;
    const cpu = threadCpu?.() ?? 0;
    const worked = threadCpu ? cpu - lastCpu >= thresholdMs / 2 : true;
    lastCpu = cpu;
    const after = runs();
    // The stall happened since the last tick: count it when a warm run executed then.
    const duringRun = before.active > 0 || after.active > 0 || after.started !== before.started;
    before = after;
    if (lag > thresholdMs && worked && duringRun && now - lastWarned > 5_000) {
      lastWarned = now;
      log.warn(
        `the event loop was blocked for ${
          Math.round(lag)
        } ms during a run: synchronous work in a tool or graph stalls every request and stream. Make it async, or pass --allow-blocking to silence this.`,
      );
    }
  }, interval);
  (t as { unref?: () => void }).unref?.();
  return () => clearInterval(t);
}

/**
 * Makes the project's `.agentcli/` enterable but not listable by other users (0711): a server
 * running as root runs local sandboxes as "nobody", which must reach `.agentcli/sandboxes/`.
 * Its database folder stays 0700. Older versions made it 0700: that is opened up too.
 */
function openDataFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o711 });
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o011) !== 0o011) chmodSync(dir, mode | 0o011);
}

/**
 * Watches a project for changes, except its hidden folders (`.agentcli` holds the database,
 * which changes with every run) and `node_modules`: the top level directly, each other
 * folder recursively (Node's recursive watch on Linux walks and re-scans whatever it covers).
 */
function watchProject(root: string, onChange: (file: string | null) => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>();
  const skip = (name: string) => name.startsWith(".") || name === "node_modules";
  const watchDir = (name: string) => {
    if (skip(name) || watchers.has(name)) return;
    try {
      if (!statSync(join(root, name)).isDirectory()) return;
      const w = watch(
        join(root, name),
        { recursive: true },
        (_e, file) => onChange(file ? join(name, String(file)) : name),
      );
      w.on("error", () => {
        w.close();
        watchers.delete(name);
      });
      watchers.set(name, w);
    } catch { /* removed meanwhile */ }
  };
  const top = watch(root, (_e, file) => {
    const name = file ? String(file) : null;
    if (name) watchDir(name);
    onChange(name);
  });
  for (const name of readdirSync(root)) watchDir(name);
  return {
    close() {
      top.close();
      for (const w of watchers.values()) w.close();
    },
  };
}
