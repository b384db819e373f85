/**
 * `agentcli schema [--eval]`: prints the JSON Schema of agent.toml (what editors use to complete
 * and check it), or with --eval that of an eval case file (docs/evals.md).
 */
import { type CommandSpec, type FlagSpec, parseArgs, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";

const spec = {
  name: "schema",
  usage: "agentcli schema [--eval]",
  summary: "Print the JSON Schema of agent.toml (also shipped as schema/agent.schema.json).",
  flags: {
    eval: {
      type: "boolean",
      description: "Print the schema of an eval case file instead (schema/eval.schema.json)",
    },
  },
} satisfies CommandSpec<Record<string, FlagSpec>>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  if (flags.eval) {
    const { evalCaseJsonSchema } = await import("../platform/index.ts");
    ctx.io.out(JSON.stringify(evalCaseJsonSchema(ctx.version), null, 2));
    return 0;
  }
  const { loadPlugins } = await import("../kernel/index.ts");
  const { agentTomlJsonSchema } = await import("../config/index.ts");
  const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  ctx.io.out(JSON.stringify(agentTomlJsonSchema(driver, ctx.version), null, 2));
  return 0;
}
