/**
 * `agentcli dev [--config <path>] [--port <int>] [--host <addr>] [--allow-blocking]`: bundle
 * the project and serve it locally through the same code as `serve`, reloading when project
 * files change (threads and memory are kept) and reporting config errors without dying.
 */
import { chmodSync, type FSWatcher, mkdirSync, readdirSync, statSync, watch } from "node:fs";
import { join, relative } from "node:path";
import { formatUserError, isUserError } from "../kernel/index.ts";
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
import type { GraphModule } from "../server/index.ts";

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
  const { hostBundle, listenFirst, parseGraphFlags } = await import("../server/index.ts");
  const early = await listenFirst({ port: flags.port as number, host: flags.host as string, env: ctx.env });
  // One import at a time with a turn of the event loop between: `/ok` is answered in the gaps.
  const turn = () => new Promise<void>((r) => setImmediate(r));
  const loaded = (async () => {
    const { loadPlugins } = await import("../kernel/index.ts");
    await turn();
    const { loadProject } = await import("../config/index.ts");
    await turn();
    const { buildBundle, readBundle } = await import("../bundle/index.ts");
    const { consoleLog } = await import("../kernel/index.ts");
    const { describeMissing } = await import("../config/index.ts");
    return { loadPlugins, loadProject, buildBundle, readBundle, consoleLog, describeMissing };
  })();
  const { loadPlugins, loadProject, buildBundle, readBundle, consoleLog, describeMissing } = await loaded.catch(
    async (err) => {
      await early.listening.close();
      throw err;
    },
  );
  const log = consoleLog("dev");
  let driver: Awaited<ReturnType<typeof loadPlugins>>;
  const build = async () => {
    const project = await loadProject(flags.config as string, {
      driver,
      env: ctx.env,
      requireEnv: false,
      cwd: ctx.cwd,
    });
    const { bytes } = await buildBundle(project, { driver, version: ctx.version });
    return { project, bundle: await readBundle(bytes) };
  };
  const report = (p: Awaited<ReturnType<typeof build>>["project"]) => {
    for (const w of p.warnings) log.warn(`${w.file}${w.line ? `:${w.line}` : ""}: ${w.message}`);
    // --sandbox <runtime> runs the sandboxes instead of the [sandbox] provider: its keys are not needed here.
    const runtime = flags.sandbox as string | undefined;
    for (const m of p.missingEnv) {
      if (runtime && m.sandbox) {
        log.info(
          `--sandbox ${runtime} runs the sandboxes: ${
            describeMissing(m)
          } is not needed by dev (deploy refuses without it)`,
        );
      } else {log.warn(
          `${describeMissing(m, "sentence")}: runs will fail until you add it to ${
            relative(ctx.cwd, join(p.root, ".env")) || ".env"
          } (deploy refuses without it)`,
        );}
    }
  };
  let project: Awaited<ReturnType<typeof build>>["project"];
  let bundle: Awaited<ReturnType<typeof build>>["bundle"];
  let dataDir: string;
  let extraGraphs: Record<string, GraphModule>;
  try {
    extraGraphs = parseGraphFlags(flags.graph as string[], ctx.cwd, { replaceAgent: Boolean(flags.replaceAgent) });
    driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
    ({ project, bundle } = await build());
    dataDir = join(project.root, ".agentcli", "db");
    openDataFolder(join(project.root, ".agentcli"));
    if (!project.env.DATABASE_URL) {
      // A new project's database is restored from its template while the server's modules load.
      const [{ prepareDataDir }, { SERVER_TEMPLATE }] = await Promise.all([
        import("../storage/index.ts"),
        import("../storage/index.ts"),
      ]);
      void prepareDataDir(dataDir, SERVER_TEMPLATE);
    }
  } catch (err) {
    early.serve(null);
    await early.listening.close();
    throw err;
  }
  report(project);
  const host = await hostBundle({
    bundle,
    driver,
    env: project.env,
    mode: "dev",
    dataDir,
    port: flags.port as number,
    host: flags.host as string,
    log,
    extraGraphs,
    sandboxRuntime: (flags.sandbox as string | undefined) ?? null,
    sandboxDir: join(project.root, ".agentcli", "sandboxes"),
    privatePaths: [project.root],
    early,
  });
  const stopMonitor = flags.allowBlocking ? () => {} : monitorBlocking(log, () => host.server.warmRuns());
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
  // Watch first, then say so: a change saved right after the banner is never missed.
  const watcher = watchProject(project.root, onChange);
  const shownHost = host.listening.host.includes(":") ? `[${host.listening.host}]` : host.listening.host;
  const base = `http://${shownHost}:${host.listening.port}`;
  ctx.io.out(`agentcli dev: "${bundle.config.agent.name}" is running
  API:  ${base}   (assistant "${bundle.config.agent.name}", graph "agent")
  UI:   ${base}/app
  Docs: ${base}/openapi.json
  Data: ${relative(ctx.cwd, join(project.root, ".agentcli")) || ".agentcli"}${
    project.env.DATABASE_URL ? " (PostgreSQL from DATABASE_URL)" : ""
  }
Watching ${relative(ctx.cwd, project.root) || "."} for changes. Press Ctrl+C to stop.`);
  const { devAuthBanner } = await import("../auth/index.ts");
  const authProvider = bundle.config.auth?.provider ?? null;
  const banner = devAuthBanner(
    bundle.config,
    project.env,
    "dev",
    (authProvider === null ? undefined : driver.spec("identity", authProvider)) ?? null,
  );
  if (banner) log.info(banner);

  await new Promise<void>((resolve) => {
    if (ctx.shutdownSignal.aborted) return resolve();
    ctx.shutdownSignal.addEventListener("abort", () => resolve(), { once: true });
  });
  ctx.io.err("agentcli dev: shutting down...");
  clearTimeout(timer);
  watcher.close();
  stopMonitor();
  await reloading;
  await host.close();
  return 0;
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
