/** `agentcli init [name] [--force]`: scaffold a new project (spec 4.1). */
import { existsSync, mkdirSync, renameSync, writeFileSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { userError } from "../errors.ts";
import { parseArgs, renderHelp, type CommandSpec } from "./args.ts";
import type { CliContext } from "./context.ts";
import { scaffoldFiles } from "./scaffold.ts";

const spec = {
  name: "init",
  usage: "agentcli init [name] [--force]",
  summary: "Scaffold a new agent project: agent.toml, AGENTS.md, .env, mcp.json and skills/ with an example review skill.",
  positionals: [{ name: "name", description: "Folder to create and the agent's name (default: the current folder)" }],
  flags: { force: { type: "boolean", description: "Overwrite the scaffold's files if they exist" } },
} satisfies CommandSpec<{ force: { type: "boolean"; description: string } }>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, positionals, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  const target = resolve(ctx.cwd, positionals[0] ?? ".");
  const name = agentName(basename(target));
  if (!name) {
    throw userError("ARGS_INVALID", { message: `Cannot scaffold "${positionals[0] ?? target}": the folder name does not make an agent name`, hint: "Pass a name of letters, digits, '-', '_' or '.': agentcli init my-agent" });
  }
  const files = scaffoldFiles(name, ctx.version);
  const existing = files.filter((f) => existsSync(join(target, f.path))).map((f) => f.path);
  if (existing.length && !flags.force) {
    throw userError("PROJECT_EXISTS", {
      message: `Cannot scaffold into "${positionals[0] ?? "."}": ${existing.map((p) => `"${p}"`).join(", ")} already exist${existing.length === 1 ? "s" : ""}`,
      hint: "Choose another folder, or pass --force to overwrite these files (other files are left alone).",
    });
  }
  // Each file is written to a temporary name and renamed, so nothing is left half-written.
  const written: string[] = [];
  try {
    for (const f of files) {
      const dest = join(target, f.path);
      mkdirSync(dirname(dest), { recursive: true });
      const tmp = `${dest}.agentcli-tmp`;
      writeFileSync(tmp, f.content, { mode: f.path === ".env" ? 0o600 : 0o644 });
      renameSync(tmp, dest);
      written.push(f.path);
    }
  } catch (err) {
    for (const f of files) rmSync(join(target, `${f.path}.agentcli-tmp`), { force: true });
    throw userError("PROJECT_EXISTS", { message: `Cannot scaffold into "${target}": ${(err as Error).message}`, hint: "Check that the folder is writable.", cause: err });
  }
  const rel = positionals[0];
  ctx.io.out(`Created agent project "${name}"${rel ? ` in ${rel}/` : ""}:
${written.map((p) => `  ${p}`).join("\n")}

Next steps:
${rel ? `  cd ${shellQuote(rel)}\n` : ""}  1. Put a model key in .env (e.g. OPENAI_API_KEY=...); keep .env out of version control.
  2. Edit AGENTS.md (instructions) and agent.toml (model, sandbox, auth, frontend).
  3. agentcli dev                 run it locally at http://127.0.0.1:2024
  4. agentcli deploy --dry-run    check what would be deployed`);
  return 0;
}

function agentName(folder: string): string {
  return folder.replace(/[^A-Za-z0-9 _.-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 100).replace(/[^A-Za-z0-9]+$/, "");
}

/** Quotes a path for a POSIX shell when it needs it: `My Agent!` -> `'My Agent!'`. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_.\/@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
