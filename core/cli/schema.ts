/** `agentcli schema`: prints the JSON Schema of agent.toml (what editors use to complete and check it). */
import { type CommandSpec, parseArgs, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";

const spec = {
  name: "schema",
  usage: "agentcli schema",
  summary: "Print the JSON Schema of agent.toml (also shipped as schema/agent.schema.json).",
  flags: {},
} satisfies CommandSpec<Record<string, never>>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  const { loadPlugins } = await import("../kernel/index.ts");
  const { agentTomlJsonSchema } = await import("../config/index.ts");
  const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  ctx.io.out(JSON.stringify(agentTomlJsonSchema(driver, ctx.version), null, 2));
  return 0;
}
