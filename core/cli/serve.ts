/**
 * `agentcli serve <bundle> [--port <int>] [--host <addr>] [--data-dir <dir>]`: the production
 * entry, what each deployment revision runs. Configuration comes from the bundle, secrets
 * from the environment; `DATABASE_URL` and `REDIS_URL` select PostgreSQL and Redis.
 * With `AGENTCLI_EXIT_WITH_PARENT=1` it shuts down when its standard input closes: a parent
 * that keeps a pipe to it open (the control plane's local listener) takes it along when it dies.
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { resolve } from "node:path";
import { agentcliError, BundleFileMissing } from "../kernel/index.ts";
import {
  type CommandSpec,
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

const spec = {
  name: "serve",
  usage:
    "agentcli serve <bundle> [--port <int>] [--host <addr>] [--data-dir <dir>] [--packages <dir>] [--graph <id>=<module>[:<export>]] [--replace-agent] [--sandbox <runtime>] [--role api|worker|all] [--workers <int>]",
  summary:
    "Serve a bundle (from `agentcli deploy`, at .agentcli/bundle.tgz) in production. Secrets come from the environment.\nWith AGENTCLI_EXIT_WITH_PARENT=1 it shuts down when its standard input closes (its parent died).",
  positionals: [{ name: "bundle", description: "The bundle file (.tgz)", required: true }],
  flags: {
    port: portFlag(2024, "Port to listen on (also $PORT)"),
    host: hostFlag("127.0.0.1"),
    dataDir: {
      type: "string",
      placeholder: "<dir>",
      default: "./agentcli-data",
      description: "Embedded database folder (ignored with DATABASE_URL)",
    },
    packages: {
      type: "string",
      placeholder: "<dir>",
      description:
        "The npm packages installed for the bundle's LangGraph.js dependencies (the control plane's build gives it)",
    },
    graph: GRAPH_FLAG,
    sandbox: SANDBOX_FLAG,
    replaceAgent: REPLACE_AGENT_FLAG,
    role: {
      type: "string",
      placeholder: "api|worker|all",
      description:
        "What this replica does: api (the Agent API, no runs), worker (runs the queue; only /ok and /info), all (default; also $AGENTCLI_ROLE)",
    },
    workers: {
      type: "int",
      placeholder: "<int>",
      min: 1,
      max: 10000,
      description: "Runs executed at once (default 4 per CPU, 4 to 64; also $AGENTCLI_WORKERS)",
    },
  },
} satisfies CommandSpec<Record<string, FlagSpec>>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, positionals, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  const file = resolve(ctx.cwd, positionals[0]!);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch {
    throw agentcliError(BundleFileMissing, { path: positionals[0]! });
  }
  const [{ loadPlugins }, { readBundle }, { hostBundle, parseGraphFlags }, { consoleLog }] = await Promise.all([
    import("../kernel/index.ts"),
    import("../bundle/index.ts"),
    import("../server/index.ts"),
    import("../kernel/index.ts"),
  ]);
  const log = consoleLog("serve");
  const bundle = await readBundle(bytes, `bundle "${positionals[0]}"`);
  const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  const port = argv.some((a) => a === "--port" || a.startsWith("--port="))
    ? (flags.port as number)
    : Number(ctx.env.PORT ?? flags.port);
  const host = await hostBundle({
    bundle,
    driver,
    env: ctx.env,
    mode: "serve",
    dataDir: resolve(ctx.cwd, flags.dataDir as string),
    packagesDir: flags.packages ? resolve(ctx.cwd, flags.packages as string) : null,
    port,
    host: flags.host as string,
    log,
    extraGraphs: parseGraphFlags(flags.graph as string[], ctx.cwd, { replaceAgent: Boolean(flags.replaceAgent) }),
    sandboxRuntime: (flags.sandbox as string | undefined) ?? null,
    privatePaths: [file],
    role: flags.role as string | undefined,
    workers: flags.workers as number | undefined,
  });
  log.info(`serving "${bundle.config.agent.name}" on http://${host.listening.host}:${host.listening.port}`);
  const withParent = ctx.env.AGENTCLI_EXIT_WITH_PARENT === "1";
  await new Promise<void>((res) => {
    if (ctx.shutdownSignal.aborted) return res();
    ctx.shutdownSignal.addEventListener("abort", () => res(), { once: true });
    if (withParent) {
      let said = false;
      const gone = () => (said || log.info("the parent process is gone (standard input closed)"), (said = true), res());
      process.stdin.once("end", gone).once("close", gone).once("error", gone).resume();
    }
  });
  if (withParent) process.stdin.destroy();
  log.info("shutting down: finishing in-flight runs...");
  await host.close();
  return 0;
}
