/**
 * `agentcli eval [--config <path>] [<file or folder>...]`: runs the project's eval cases
 * (`evals/`, docs/evals.md) against the agent in process, served exactly as `dev` serves it
 * (same harness, tools, subagents; sandboxes with --sandbox), on the model of `.env` or
 * `--model`. Prints a table, writes --junit and --json, and fails when a case fails.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { agentcliError, EvalsFailed, type ServerLog, silentLog } from "../kernel/index.ts";
import { type CommandSpec, CONFIG_FLAG, type FlagSpec, parseArgs, renderHelp, SANDBOX_FLAG } from "./args.ts";
import type { CliContext } from "./context.ts";

const spec = {
  name: "eval",
  usage:
    "agentcli eval [--config <path>] [--model <provider:model>] [--grader-model <provider:model>] [--sandbox <runtime>] [--concurrency <int>] [--junit <file>] [--json <file>] [--verbose] [<file or folder>...]",
  summary:
    "Run the project's eval cases (evals/) against the agent, in process as dev serves it; exits non-zero when a case fails.",
  flags: {
    config: CONFIG_FLAG,
    model: {
      type: "string",
      placeholder: "<provider:model>",
      description: "Run the agent on this model instead of [agent].model (or the one chosen from .env's credentials)",
    },
    graderModel: {
      type: "string",
      placeholder: "<provider:model>",
      description: "The model that grades rubric checks (default: the agent's model)",
    },
    sandbox: SANDBOX_FLAG,
    concurrency: { type: "int", placeholder: "<int>", default: 4, min: 1, max: 64, description: "Cases run at once" },
    junit: { type: "string", placeholder: "<file>", description: "Also write the results as JUnit XML" },
    json: {
      type: "string",
      placeholder: "<file>",
      description: "Also write the results (turns, tool calls, checks) as JSON",
    },
    verbose: { type: "boolean", description: "Print the server's log (run errors, warnings) to stderr" },
  },
  positionals: [{
    name: "file or folder",
    description: "Case files or folders (default: the project's evals/)",
    variadic: true,
  }],
} satisfies CommandSpec<Record<string, FlagSpec>>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, positionals, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  const { loadPlugins, consoleLog } = await import("../kernel/index.ts");
  const { loadProject } = await import("../config/index.ts");
  const { buildBundle, readBundle } = await import("../bundle/index.ts");
  const evals = await import("../platform/index.ts");
  const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  const project = await loadProject(flags.config as string, { driver, env: ctx.env, requireEnv: false, cwd: ctx.cwd });
  const display = (file: string) => relative(ctx.cwd, file) || file;
  const files = evals.findCaseFiles(positionals, { cwd: ctx.cwd, root: project.root });
  const cases = evals.loadCases(files, display);
  const bundle = await readBundle((await buildBundle(project, { driver, version: ctx.version })).bytes);
  if (flags.model) bundle.config.agent.model = flags.model as string;
  const log: ServerLog = flags.verbose ? consoleLog("eval") : silentLog;
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...env } = project.env;
  const dataDir = mkdtempSync(join(tmpdir(), "agentcli-eval-"));
  const { hostBundle } = await import("../server/index.ts");
  const host = await hostBundle({
    bundle,
    driver,
    env,
    mode: "dev",
    dataDir,
    port: 0,
    host: "127.0.0.1",
    log,
    sandboxRuntime: (flags.sandbox as string | undefined) ?? null,
    sandboxDir: join(project.root, ".agentcli", "sandboxes"),
    privatePaths: [project.root],
  });
  ctx.io.err(`agentcli eval: ${cases.length} case${cases.length === 1 ? "" : "s"} of "${bundle.config.agent.name}"`);
  let results: Awaited<ReturnType<typeof evals.runCases>>;
  try {
    const { resolveModelSpec } = await import("../harness/index.ts");
    const graderSpec = () =>
      (flags.graderModel as string | undefined) ?? resolveModelSpec(bundle.config.agent.model, driver, env);
    let grader: ReturnType<typeof evals.modelGrader> | null = null;
    results = await evals.runCases({
      cases,
      concurrency: flags.concurrency as number,
      fetchAs: (user) =>
        evals.agentFetch({
          baseUrl: "http://agentcli-eval.local",
          headers: { "x-agentcli-dev-user": user },
          handler: host.server.fetch,
        }),
      checks: {
        grade: (input) => (grader ??= evals.modelGrader({ spec: graderSpec(), driver, env }))(input),
        readMemory: async (path, who) => {
          const at = evals.memoryLocation(path, {
            assistantId: who.assistantId ?? bundle.config.agent.name,
            user: who.user,
          });
          const item = await host.server.storage.store.get(at.namespace, at.key);
          return item ? JSON.stringify(item.value) : null;
        },
      },
      onResult: (r) => ctx.io.err(`  ${r.passed ? "pass" : "FAIL"} ${r.name}`),
    });
  } finally {
    await host.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  ctx.io.out(evals.resultsTable(results));
  if (flags.junit) writeReport(resolve(ctx.cwd, flags.junit as string), evals.resultsJunit(results));
  if (flags.json) writeReport(resolve(ctx.cwd, flags.json as string), evals.resultsJson(results));
  const failed = results.filter((r) => !r.passed).length;
  if (failed > 0) throw agentcliError(EvalsFailed, { failed, total: results.length });
  return 0;
}

/** Writes a report file, making its folder (`--junit reports/evals.xml`). */
function writeReport(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
