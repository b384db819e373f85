/**
 * argv -> command. The only place that exits the process. Commands are imported lazily so
 * `agentcli --version` loads nothing but this file.
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { AgentcliError, exitCodeOf, formatUserError, fromSystemError } from "../core/kernel/errors.ts";
import type { CliContext, CommandModule } from "../core/cli/context.ts";
import { VERSION } from "../core/kernel/version.ts";
import { invocationCommand } from "../core/cli/invocation.ts";

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  init: { summary: "Scaffold a new agent project", load: () => import("../core/cli/init.ts") },
  dev: { summary: "Bundle and run the project locally, reloading on change", load: () => import("../core/cli/dev.ts") },
  deploy: {
    summary: "Bundle and deploy the project (beta); --dry-run to check it",
    load: () => import("../core/cli/deploy.ts"),
  },
  eval: {
    summary: "Run the project's eval cases against the agent (for CI); non-zero exit when one fails",
    load: () => import("../core/cli/eval.ts"),
  },
  serve: { summary: "Serve a bundle in production (what deployments run)", load: () => import("../core/cli/serve.ts") },
  router: {
    summary:
      "Route a deployment's threads between its serving and canary revisions (a Kubernetes canary's router pods)",
    load: () => import("../core/cli/router.ts"),
  },
  platform: {
    summary: "Run and administer the self-hosted control plane",
    load: () => import("../core/cli/platform.ts"),
  },
  schema: { summary: "Print the JSON Schema of agent.toml", load: () => import("../core/cli/schema.ts") },
  plugins: {
    summary: "List the plugins of this agentcli: name, version, kind, hook points",
    load: () => import("../core/cli/plugins.ts"),
  },
  build: {
    summary: "Build a single executable with extra plugins compiled in (from a checkout)",
    load: () => import("../core/cli/build.ts"),
  },
};

/** Exit status of a usage error (an unknown command or option, a value a flag cannot take); other user errors exit 1, bugs 70. */
const EXIT_USAGE = 2;
/** How long a command may take to stop after SIGTERM or SIGINT before the process exits anyway (`AGENTCLI_STOP_GRACE_SECONDS`). */
const DEFAULT_GRACE_S = 30;

const HELP = `agentcli ${VERSION}: scaffold, run and deploy AI agents

Usage: agentcli <command> [options]

Commands:
${Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(10)}${c.summary}`).join("\n")}

Global options:
  --plugin <path>   Load a third-party plugin file (repeatable; also AGENTCLI_PLUGINS, ":"-separated)
  -v, --version     Print the version
  -h, --help        Show help (also "agentcli <command> --help")
`;

export async function main(argv: string[]): Promise<number> {
  // Global options go before or after the command (`-h` stays per-command help); after `--`
  // everything is the command's.
  const pluginPaths: string[] = [];
  const rest: string[] = [];
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === "--plugin") pluginPaths.push(argv[++i] ?? "");
    else if (a.startsWith("--plugin=")) pluginPaths.push(a.slice("--plugin=".length));
    else if (a === "-v" || a === "--version") version = true;
    else rest.push(a);
  }
  const [name, ...args] = rest;
  if (version || name === "version") {
    process.stdout.write(`agentcli ${VERSION}\n`);
    return 0;
  }
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(HELP);
    return name ? 0 : EXIT_USAGE;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(
      `error: Cannot run "agentcli ${name}": unknown command\nhint: Commands are ${
        Object.keys(COMMANDS).map((c) => `"${c}"`).join(", ")
      }; see "agentcli --help".\n`,
    );
    return EXIT_USAGE;
  }
  const envPlugins = (process.env.AGENTCLI_PLUGINS ?? "").split(":").filter(Boolean);
  const abort = new AbortController();
  const graceS = Number(process.env.AGENTCLI_STOP_GRACE_SECONDS ?? DEFAULT_GRACE_S);
  const graceMs = (Number.isFinite(graceS) && graceS >= 0 ? graceS : DEFAULT_GRACE_S) * 1000;
  // The first signal asks the command to stop (servers close, deploys cancel); a second one,
  // or a command that has not ended after the grace period, ends the process.
  const exitCode = (signal: NodeJS.Signals) => 128 + (signal === "SIGINT" ? 2 : 15);
  const stop = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted) return;
    abort.abort();
    setTimeout(() => {
      process.stderr.write(`agentcli: still stopping ${graceMs / 1000} s after ${signal}; exiting\n`);
      process.exit(exitCode(signal));
    }, graceMs).unref();
  };
  const onSignal = (signal: NodeJS.Signals) => (abort.signal.aborted ? process.exit(exitCode(signal)) : stop(signal));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const stopWatchingParent = exitWithNpm(() => stop("SIGTERM"));
  const ctx: CliContext = {
    io: terminalIO(),
    env: process.env,
    cwd: process.cwd(),
    pluginPaths: [...envPlugins, ...pluginPaths],
    builtinPlugins: async () => (await import("../plugins/registry.ts")).builtinPlugins,
    version: VERSION,
    invocation: invocationCommand(process.argv[1], process.env),
    shutdownSignal: abort.signal,
  };
  try {
    const mod = await command.load();
    return await mod.run(args, ctx);
  } catch (err) {
    const known = err instanceof AgentcliError ? err : fromSystemError(err);
    if (known) {
      process.stderr.write(`${formatUserError(known)}\n`);
      return exitCodeOf(known);
    }
    process.stderr.write(
      `agentcli ${VERSION} hit a bug; please report it with the trace below.\n${
        err instanceof Error ? err.stack : String(err)
      }\n`,
    );
    return 70;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    stopWatchingParent();
  }
}

/**
 * Under `npx agentcli` (and `npm run`/`npm exec`) the process is npm -> sh -> agentcli, and a
 * SIGTERM or SIGINT sent to npm by its pid (what scripts and CI runners do) ends npm and the
 * shell without reaching agentcli, which would keep serving, orphaned, holding its lock. So
 * under npm, a parent that goes away (the process is re-parented) counts as the signal.
 */
function exitWithNpm(stop: () => void): () => void {
  if (!process.env.npm_lifecycle_event) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 250);
  timer.unref();
  return () => clearInterval(timer);
}

function terminalIO(): CliContext["io"] {
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  return {
    out: (t) => process.stdout.write(t.endsWith("\n") ? t : `${t}\n`),
    err: (t) => process.stderr.write(t.endsWith("\n") ? t : `${t}\n`),
    interactive,
    color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
    confirm: (question) =>
      new Promise((resolve) => {
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        rl.question(`${question} [y/N] `, (answer) => {
          rl.close();
          resolve(/^y(es)?$/i.test(answer.trim()));
        });
      }),
  };
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
