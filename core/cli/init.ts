/** `agentcli init [name] [--force]`: scaffold a new project (spec 4.1). */
import { existsSync, lstatSync, mkdirSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { systemErrorPhrase, userError } from "../kernel/index.ts";
import { type CommandSpec, parseArgs, renderHelp } from "./args.ts";
import type { CliContext } from "./context.ts";
import { scaffoldFiles, SCHEMA_PATH } from "./scaffold.ts";

const spec = {
  name: "init",
  usage: "agentcli init [name] [--force]",
  summary:
    "Scaffold a new agent project: agent.toml, AGENTS.md, .env, mcp.json and skills/ with an example review skill.",
  positionals: [{ name: "name", description: "Folder to create and the agent's name (default: the current folder)" }],
  flags: { force: { type: "boolean", description: "Overwrite the scaffold's files if they exist" } },
} satisfies CommandSpec<{ force: { type: "boolean"; description: string } }>;

export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const { flags, positionals, help } = parseArgs(spec, argv);
  if (help) return ctx.io.out(renderHelp(spec)), 0;
  const target = resolve(ctx.cwd, positionals[0] ?? ".");
  const shown = positionals[0] ?? target;
  // A name the file system cannot hold is refused before anything is written.
  const tooLong = target.split(sep).find((part) => Buffer.byteLength(part) > 255);
  if (tooLong !== undefined) {
    throw userError("ARGS_INVALID", {
      message: `Cannot scaffold "${shown.length > 80 ? `${shown.slice(0, 80)}...` : shown}": the folder name is ${
        Buffer.byteLength(tooLong)
      } bytes, more than the 255 a file system allows`,
      hint: "Pass a shorter name: agentcli init my-agent",
    });
  }
  const name = agentName(basename(target));
  if (!name) {
    throw userError("ARGS_INVALID", {
      message: `Cannot scaffold "${positionals[0] ?? target}": the folder name does not make an agent name`,
      hint: "Pass a name of letters, digits, '-', '_' or '.': agentcli init my-agent",
    });
  }
  const files = [...scaffoldFiles(name, ctx.version), {
    path: SCHEMA_PATH,
    content: `${JSON.stringify(await agentTomlSchema(ctx), null, 2)}\n`,
  }];
  const made = makeFolder(target, shown);
  const existing = files.filter((f) => f.path !== SCHEMA_PATH && existsSync(join(target, f.path))).map((f) => f.path);
  if (existing.length && !flags.force) {
    throw userError("PROJECT_EXISTS", {
      message: `Cannot scaffold into "${positionals[0] ?? "."}": ${
        existing.map((p) => `"${p}"`).join(", ")
      } already exist${existing.length === 1 ? "s" : ""}`,
      hint: "Choose another folder, or pass --force to overwrite these files (other files are left alone).",
    });
  }
  // Each file is written to a temporary name and renamed; on a failure, what this run created is removed again.
  const written: string[] = [];
  const created: string[] = [];
  try {
    for (const f of files) {
      const dest = join(target, f.path);
      made.push(...makeFolder(dirname(dest), shown));
      const tmp = `${dest}.agentcli-tmp`;
      const fresh = !existsSync(dest);
      writeFileSync(tmp, f.content, { mode: f.path === ".env" ? 0o600 : 0o644 });
      renameSync(tmp, dest);
      if (fresh) created.push(dest);
      written.push(f.path);
    }
  } catch (err) {
    for (const path of [...files.map((f) => join(target, `${f.path}.agentcli-tmp`)), ...created]) {
      try {
        rmSync(path, { force: true });
      } catch { /* cleanup never hides the first error */ }
    }
    for (const dir of made.reverse()) {
      try {
        rmdirSync(dir);
      } catch { /* not empty, or gone */ }
    }
    throw userError("PROJECT_EXISTS", {
      message: `Cannot scaffold into "${shown}": ${systemErrorPhrase(err)}`,
      hint: "Check that the folder is writable.",
      cause: err,
    });
  }
  const rel = positionals[0];
  const agentcli = ctx.invocation ?? "agentcli";
  const shownFiles = written.filter((p) => p !== SCHEMA_PATH);
  ctx.io.out(`Created agent project "${name}"${rel ? ` in ${rel}/` : ""}:
${shownFiles.map((p) => `  ${p}`).join("\n")}
  (and ${SCHEMA_PATH}, agent.toml's schema for editors)

Next steps:
${
    rel
      ? `  cd ${shellQuote(rel)}\n`
      : ""
  }  1. Put a model key in .env (e.g. OPENAI_API_KEY=...); keep .env out of version control.
  2. Edit AGENTS.md (instructions) and agent.toml (model, sandbox, auth, frontend).
  3. ${agentcli} dev                 run it locally at http://127.0.0.1:2024
  4. ${agentcli} deploy --dry-run    check what would be deployed`);
  return 0;
}

/** agent.toml's JSON Schema with this agentcli's plugins (what `agentcli schema` prints). */
async function agentTomlSchema(ctx: CliContext): Promise<unknown> {
  const { loadPlugins } = await import("../kernel/index.ts");
  const { agentTomlJsonSchema } = await import("../config/index.ts");
  const driver = await loadPlugins(await ctx.builtinPlugins(), { paths: ctx.pluginPaths, cwd: ctx.cwd });
  return agentTomlJsonSchema(driver, ctx.version);
}

/**
 * Creates `dir` and its missing parents one at a time (Node's recursive mkdir spins forever
 * under /proc), returning the folders it made; a parent that is a file, or a folder that
 * cannot be made, is a user error naming it.
 */
function makeFolder(dir: string, shown: string): string[] {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        throw userError("PROJECT_EXISTS", {
          message: `Cannot scaffold into "${shown}": ${systemErrorPhrase(err)}`,
          hint: "Choose another folder.",
        });
      }
    }
    if (st) {
      if (!st.isDirectory() && !(st.isSymbolicLink() && isDirectoryPath(at))) {
        throw userError("PROJECT_EXISTS", {
          message: `Cannot scaffold into "${shown}": "${at}" is a file, not a folder`,
          hint: "Choose a folder that is not inside a file.",
        });
      }
      break;
    }
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  const made: string[] = [];
  for (const d of missing) {
    try {
      mkdirSync(d);
      made.push(d);
    } catch (err) {
      for (const m of made.reverse()) {
        try {
          rmdirSync(m);
        } catch { /* best effort */ }
      }
      throw userError("PROJECT_EXISTS", {
        message: `Cannot scaffold into "${shown}": cannot create "${d}" (${
          (err as NodeJS.ErrnoException).code === "ENOENT"
            ? "the file system does not allow a folder there"
            : systemErrorPhrase(err)
        })`,
        hint: "Choose a folder you can write to.",
      });
    }
  }
  return made;
}

function isDirectoryPath(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function agentName(folder: string): string {
  return folder.replace(/[^A-Za-z0-9 _.-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 100).replace(
    /[^A-Za-z0-9]+$/,
    "",
  );
}

/** Quotes a path for a POSIX shell when it needs it: `My Agent!` -> `'My Agent!'`. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_.\/@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
