/**
 * `agentcli plugins [--json]`: the plugins this agentcli has (compiled in, then any loaded
 * with `--plugin`): name, version, kind, what each provides and its hook points.
 */
import { type CommandSpec, parseArgs, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";
import type { Plugin } from "../kernel/index.ts";

const spec = {
  name: "plugins",
  usage: "agentcli plugins [--json]",
  summary:
    "List the plugins of this agentcli (compiled in, and loaded with --plugin): name, version, kind, provider, hook points.",
  flags: { json: { type: "boolean", description: "Print the list as JSON" } },
} satisfies CommandSpec<{ json: { type: "boolean"; description: string } }>;

/** What one plugin provides, in the words `agent.toml` and `deploy --target` use. */
function provides(p: Plugin): string {
  switch (p.kind) {
    case "model":
      return `model "${p.model.prefix}:"`;
    case "identity":
      return `[auth] provider "${p.identity.provider}"`;
    case "sandbox":
      return `[sandbox] provider "${p.sandbox.provider}"`;
    case "sandbox-runtime":
      return `sandbox runtime "${p.sandboxRuntime.name}"`;
    case "deploy":
      return `deploy --target ${p.deploy.target}`;
    default:
      return "";
  }
}

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  const { loadPlugins } = await import("../kernel/index.ts");
  const builtins = await ctx.builtinPlugins();
  const driver = await loadPlugins(builtins, { paths: ctx.pluginPaths, cwd: ctx.cwd });
  const rows = driver.plugins.map((p, i) => ({
    name: p.name,
    version: p.version ?? (i < builtins.length ? ctx.version : null),
    kind: p.kind,
    provides: provides(p),
    hooks: Object.keys(p.hooks ?? {}).sort(),
    source: i < builtins.length ? "compiled in" : "loaded with --plugin",
  }));
  if (flags.json) {
    ctx.io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  const table = [
    ["NAME", "VERSION", "KIND", "PROVIDES", "HOOKS"],
    ...rows.map((r) => [r.name, r.version ?? "-", r.kind, r.provides || "-", r.hooks.join(", ") || "-"]),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  ctx.io.out(
    table.map((row) => row.map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]!))).join("  ")).join(
      "\n",
    ),
  );
  return 0;
}
