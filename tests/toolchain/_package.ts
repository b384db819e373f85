/**
 * The npm package as a plugin author installs it: `npm pack` of this checkout, then
 * `npm install <tarball>` into a fresh project (from the npm cache where it can), with the
 * plugins of tests/fixtures/package-plugins/ (and their kits' test) copied in.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const NODE22 = join(ROOT, "node_modules/.bin/node");
export const PLUGINS = ["model", "identity", "sandbox", "deploy", "extension"];

/** npm and tsc run on Node 22 (the system `node` may be older): node_modules/.bin first on PATH. */
export const toolEnv = () => ({
  ...process.env,
  PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH}`,
  npm_config_fund: "false",
  npm_config_audit: "false",
  npm_config_update_notifier: "false",
});

export interface InstalledPackage {
  /** The temporary folder holding the tarball and the project (remove it when done). */
  work: string;
  project: string;
  tarball: string;
  /** The tarball's file list. */
  packed: string[];
}

export async function installPackage(): Promise<InstalledPackage> {
  const work = await mkdtemp(join(tmpdir(), "agentcli-package-"));
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], {
    cwd: ROOT,
    env: toolEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  // The prepare/prepack builds print first (with colour codes holding "["): the JSON array starts on a line of its own.
  const [info] = JSON.parse(stdout.slice(stdout.search(/^\[$/m))) as Array<
    { filename: string; files: Array<{ path: string }> }
  >;
  const tarball = join(work, info!.filename);
  const project = join(work, "plugin-author");
  await mkdir(project);
  // No "type": "module": a .ts plugin must load without it.
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "plugin-author", private: true }, null, 2));
  // Not --prefer-offline: a cached package document older than the registry's newest versions
  // made npm resolve a range to a version it then could not find (ETARGET, 2026-11-27).
  await run("npm", ["install", tarball, "--ignore-scripts"], {
    cwd: project,
    env: toolEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const name of [...PLUGINS, "kits.test"]) {
    await cp(join(ROOT, "tests/fixtures/package-plugins", `${name}.ts`), join(project, `${name}.ts`));
  }
  return { work, project, tarball, packed: info!.files.map((f) => f.path) };
}
