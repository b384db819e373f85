/**
 * The npm packages of a LangGraph.js project, installed by the revision's build as LangGraph's
 * build installs them into its image: each local folder of langgraph.json's `dependencies`
 * (`"."`, `"./lib"`) with a package.json gets the frozen install of its lockfile's manager:
 * `yarn install` for a yarn.lock, `pnpm install` for a pnpm-lock.yaml (./packages-managers.ts),
 * `npm ci` for a package-lock.json (or npm-shrinkwrap.json); `npm install` without a lockfile. A
 * package name among the `dependencies` is added to the project's root with npm. Always without
 * dev dependencies (but under yarn 2+) and `--ignore-scripts` (no package's install scripts run
 * on the control plane). A folder's own `.npmrc` / `.yarnrc` / `.yarnrc.yml` is honoured, its
 * `${VAR}` credentials taken from the deployment's secrets (./packages-registries.ts).
 *
 * Only a project that needs a package agentcli does not lend (`unprovidedPackages`) is
 * installed; one whose dependencies are all lent (@langchain/*, langchain, hono, zod) gets
 * agentcli's copies, as before. When installed, the project's own versions win for its
 * imports (Node resolves its node_modules first); a lent package it does not install still
 * comes from agentcli.
 *
 * The bundle stays as it is (no node_modules in it): the install lands in
 * `<cache>/<key>/<folder>/node_modules`, keyed by a hash of the manifests and lockfiles (and
 * the pnpm or yarn version, Node's major version, the folder's registry settings and a digest of
 * the secrets they name: ./packages-registries.ts), so a later revision with the same ones reuses
 * it without running npm.
 * The revision process links it into the folder its sources are written to (`serve --packages`).
 * Each use stamps the folder's modification time; the sweep (./packages-sweep.ts) removes one
 * no kept revision names once that stamp is older than its grace period.
 *
 * @example
 * const dir = await installPackages(bundle, { cacheDir: "/data/packages", log });
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import {
  isCompiled,
  type LangGraphConfig,
  redact,
  unprovidedPackages,
  variableReferences,
} from "../../kernel/index.ts";
import { BuildFailure } from "./build.ts";
import {
  LOCKFILES,
  type Manager,
  managerError,
  managerInstall,
  staleLockfile,
  unitManager,
} from "./packages-managers.ts";
import { type ProjectSettings, projectSettings, registryFiles } from "./packages-registries.ts";

/** The files of a bundle and its LangGraph.js config: what an install needs. */
export interface PackageSource {
  files: ReadonlyMap<string, Uint8Array>;
  langgraph: LangGraphConfig | null;
}

/** The install source of bundle bytes (a bundle already validated by the build). */
export async function packageSource(bytes: Uint8Array): Promise<PackageSource> {
  const { readBundle } = await import("../../bundle/index.ts");
  const bundle = await readBundle(bytes);
  return { files: bundle.files, langgraph: bundle.config.langgraph ?? null };
}

/** One folder that npm installs into: its package.json and lockfile (the project's relative path; "" is the root). */
interface Unit {
  dir: string;
  manifest: Uint8Array;
  lock: { name: string; bytes: Uint8Array } | null;
  /** Its registry settings (`.npmrc`, `.yarnrc`, `.yarnrc.yml`; ./packages-registries.ts). */
  settings: Array<{ name: string; bytes: Uint8Array }>;
}

/** What a project installs: its folders, the package names of `dependencies` (with their versions), and the cache key. */
export interface InstallPlan {
  units: Unit[];
  names: string[];
  key: string;
}

/** The file naming the installed folders (`["", "lib"]`), written beside them for the revision process. */
export const UNITS_FILE = "agentcli-units.json";

const NPM_FLAGS = ["--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier"];
/** npm's error lines that say nothing of the cause: a bare code or status, its advice on other sources. */
const BOILERPLATE =
  /^(code \S+|errno \S+|\d{3}|Note that you can also install from a|tarball, folder, http url, or git url\.)$/;
/** Variables of the control plane npm is given: how it finds its registry, proxy and certificates, nothing else. */
const NPM_ENV =
  /^(PATH|HOME|USER|TMPDIR|LANG|LC_ALL|SYSTEMROOT|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|XDG_CONFIG_HOME|NODE_AUTH_TOKEN|(HTTPS?|NO)_PROXY|npm_config_.*|NPM_CONFIG_.*)$/i;

const decoder = new TextDecoder();

/** What the project's dependencies ask npm to install, or null when agentcli lends all of them. */
export function installPlan(src: PackageSource, env: Readonly<Record<string, string>> = {}): InstallPlan | null {
  const lg = src.langgraph;
  if (!lg || !unprovidedPackages(lg).length) return null;
  const units: Unit[] = [];
  const names: string[] = [];
  for (const dep of lg.dependencies) {
    if (!/^\.{1,2}(\/|$)/.test(dep)) {
      names.push(dep);
      continue;
    }
    const dir = dep.replace(/^\.\/?/, "").replace(/\/+$/, "");
    const at = (f: string) => (dir ? `${dir}/${f}` : f);
    const manifest = src.files.get(at("package.json"));
    if (!manifest || units.some((u) => u.dir === dir)) continue;
    const lockName = LOCKFILES.find((f) => src.files.has(at(f)));
    const lock = lockName ? { name: lockName, bytes: src.files.get(at(lockName))! } : null;
    units.push({ dir, manifest, lock, settings: registryFiles(src.files, dir) });
  }
  const hash = createHash("sha256").update(`agentcli-packages-1\0node${process.versions.node.split(".")[0]}\0`);
  for (const u of units) {
    hash.update(`${u.dir}\0`).update(u.manifest).update(`\0${u.lock?.name ?? ""}\0`).update(u.lock?.bytes ?? "");
    // The manager's version, when pnpm or yarn installs: a new default installs again.
    const manager = unitManager(u);
    if (manager) hash.update(`\0${manager.spec}`);
    // Its registry settings, when it has any (references, never a token's value).
    for (const f of u.settings) hash.update(`\0${f.name}\0`).update(f.bytes);
    // And a digest of the secrets they name: a project without the token never reuses the install.
    for (const ref of u.settings.flatMap((f) => variableReferences(decoder.decode(f.bytes)))) {
      hash.update(createHash("sha256").update(`${ref.name}=${env[ref.name] ?? ""}`).digest());
    }
  }
  hash.update(`\0${names.join("\0")}`);
  return { units, names, key: hash.digest("hex").slice(0, 32) };
}

/** Where an install goes and what it is given: `env` holds the deployment's secrets, for the `${VAR}` of its registry settings. */
export interface InstallOptions {
  cacheDir: string;
  log: (message: string) => void;
  signal?: AbortSignal;
  npm?: string;
  claim?: ClaimPackages;
  env?: Readonly<Record<string, string>>;
}

/**
 * Records that a revision uses the install `key` ("" none), then runs `use` (whether the folder
 * is there, its use time stamped), both under the lock the sweep removes folders under.
 */
export type ClaimPackages = (key: string, use: () => Promise<boolean>) => Promise<boolean>;

/**
 * Installs the project's packages (see the file comment) under `cacheDir`, or reuses an
 * earlier install of the same manifests; returns the folder holding them, or null when
 * agentcli lends everything the project needs. `claim` records the key first, so the sweep
 * never removes a folder being reused or installed. A failed install throws a
 * {@link BuildFailure} with npm's reason (no paths of this machine, no credentials); its output
 * is in the log.
 */
export async function installPackages(
  src: PackageSource,
  opts: InstallOptions,
): Promise<string | null> {
  const plan = installPlan(src, opts.env);
  const claim: ClaimPackages = opts.claim ?? ((_key, use) => use());
  if (!plan) {
    await claim("", async () => false);
    return null;
  }
  const target = join(opts.cacheDir, plan.key);
  const installed = await claim(plan.key, async () => {
    if (!existsSync(join(target, UNITS_FILE))) return false;
    const now = new Date();
    await utimes(target, now, now);
    return true;
  });
  if (installed) {
    opts.log(`reusing the installed npm packages ${plan.key.slice(0, 12)} (same package.json and lockfile)`);
    return target;
  }
  const tmp = join(opts.cacheDir, `.${plan.key}.${randomUUID().slice(0, 8)}`);
  try {
    const units = plan.units.length ? plan.units : [{ dir: "", manifest: rootManifest(), lock: null, settings: [] }];
    for (const u of units) {
      const dir = join(tmp, u.dir);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "package.json"), u.manifest);
      if (u.lock) await writeFile(join(dir, u.lock.name), u.lock.bytes);
      const shown = u.dir ? `./${u.dir}` : "the project";
      const manager = unitManager(u);
      const settings = projectSettings(u.settings, { shown, env: opts.env ?? {}, pnpm: manager?.name === "pnpm" });
      for (const f of settings.files) await writeFile(join(dir, f.name), f.text);
      if (settings.files.length) {
        opts.log(`${shown} has ${settings.files.map((f) => f.name).join(", ")}: its registry settings are used`);
      }
      if (settings.dropped.length) {
        opts.log(`${shown}: ${settings.dropped.join(", ")} not used (a path, program or plugin of the control plane)`);
      }
      // A project with its own registry settings gets an npm cache of its own: a private
      // package in the shared cache would install, by its integrity, for a project without the token.
      const cache = settings.files.length ? `${tmp}.npm-cache` : undefined;
      const ro = { ...opts, cwd: dir, root: tmp, env: settings.env, cache };
      const others = LOCKFILES.filter((f) => f !== u.lock?.name && src.files.has(u.dir ? `${u.dir}/${f}` : f));
      if (others.length) {
        opts.log(`${shown} also has ${others.join(", ")}: ${u.lock!.name} is used, as LangGraph's build picks it`);
      }
      if (manager) {
        await managed(manager, { ...ro, shown, lock: u.lock!.name, settings });
      } else {
        const command = u.lock ? ["ci", ...NPM_FLAGS] : ["install", ...NPM_FLAGS];
        opts.log(`installing the npm packages of ${shown}: npm ${command[0]}${u.lock ? ` (${u.lock.name})` : ""}`);
        await npm(command, ro);
      }
      if (u.dir === "" && plan.names.length) {
        opts.log(`installing ${plan.names.join(", ")} (named in "dependencies")`);
        await npm(["install", "--no-save", ...NPM_FLAGS, ...plan.names], ro);
      }
      await mkdir(join(dir, "node_modules"), { recursive: true });
    }
    if (!units.some((u) => u.dir === "") && plan.names.length) {
      throw new BuildFailure(
        `"dependencies" names packages (${
          plan.names.join(", ")
        }) but the project has no package.json at its root to add them to`,
      );
    }
    await writeFile(join(tmp, UNITS_FILE), JSON.stringify(units.map((u) => u.dir)));
    await rename(tmp, target).catch(async (err: NodeJS.ErrnoException) => {
      // Another build installed the same packages meanwhile: theirs serves.
      if (!existsSync(join(target, UNITS_FILE))) throw err;
    });
    opts.log(`installed the npm packages ${plan.key.slice(0, 12)}`);
    return target;
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await rm(`${tmp}.npm-cache`, { recursive: true, force: true });
  }
}

function rootManifest(): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ name: "agentcli-project", private: true }));
}

/** A line of npm's output as shown: the install folder named as the project, credentials and npm's log path left out. */
export function npmLine(line: string, root: string, hide: readonly string[] = []): string | null {
  if (/complete log of this run|_logs\/|A complete log/i.test(line)) return null;
  let shown = line.split(root).join("<project>");
  for (const value of hide) shown = shown.split(value).join("[redacted]");
  shown = shown
    .replace(/(\/\/)[^/@\s:]+:[^/@\s]+@/g, "$1[redacted]@")
    .replace(/(_auth(Token)?\s*=\s*)\S+/gi, "$1[redacted]");
  return redact(shown);
}

/** Where a tool runs and where its lines go. */
interface RunOptions {
  cwd: string;
  root: string;
  log: (m: string) => void;
  signal?: AbortSignal;
  npm?: string;
  /** The variables the project's registry settings reference (never shown). */
  env?: Record<string, string>;
  /** npm's cache folder, when not the control plane's. */
  cache?: string;
}

/** A command the install runs: how its lines are shown, which of them say why it failed, and what its failure says. */
interface Tool {
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  error: (line: string) => string | null;
  failure: (reason: string, lines: string[]) => string;
  quiet?: boolean;
}

/** Runs npm in `cwd`; its lines go to the log; a failure is a {@link BuildFailure} with npm's error lines. */
function npm(args: string[], o: RunOptions): Promise<string[]> {
  return run({
    label: "npm",
    command: o.npm ?? "npm",
    args: o.cache ? [...args, `--cache=${o.cache}`] : args,
    error: (line) => {
      const error = line.match(/^npm (?:error|ERR!)\s*(.*)$/)?.[1]?.trim();
      return error && !BOILERPLATE.test(error) ? error : null;
    },
    failure: (reason) => `npm ${args[0]} failed: ${reason}`,
  }, o);
}

/**
 * Installs the manager's npm package with npm beside the install folder, runs its frozen install
 * in `cwd`, and removes it. A lockfile it refuses fails the build saying how to fix it.
 */
async function managed(
  m: Manager,
  o: RunOptions & { shown: string; lock: string; settings: ProjectSettings },
): Promise<void> {
  const tool = `${o.root}.manager`;
  try {
    o.log(`installing the npm packages of ${o.shown}: ${m.name} install (${o.lock}) with ${m.spec}`);
    await mkdir(tool, { recursive: true });
    await writeFile(join(tool, "package.json"), JSON.stringify({ name: "agentcli-manager", private: true }));
    await npm(["install", "--no-save", "--no-package-lock", ...NPM_FLAGS, m.spec], {
      ...o,
      cwd: tool,
      env: {},
      cache: undefined,
    });
    const registry = m.berry && !o.settings.registry ? await npmRegistry({ ...o, cwd: tool, env: {} }) : "";
    const { args, env } = managerInstall(m, { cache: join(tool, "cache"), registry });
    if (o.settings.userConfig) env.npm_config_userconfig = await userConfig(join(tool, "npmrc"), o.settings.userConfig);
    await run({
      label: m.name,
      // The single executable is not Node: there the manager runs on the Node npm runs on.
      command: isCompiled() ? "node" : process.execPath,
      args: [join(tool, "node_modules", m.bin), ...args],
      env,
      error: (line) => managerError(m, line),
      failure: (reason, lines) =>
        staleLockfile(m, lines)
          ? `${m.name} install failed: ${o.lock} of ${o.shown} is out of date with its package.json; run \`${m.name} install\` and commit ${o.lock}`
          : `${m.name} install failed: ${reason}`,
    }, o);
  } finally {
    await rm(tool, { recursive: true, force: true });
  }
}

/** Writes the control plane's user `.npmrc` and then `lines` to `file`; its path. */
async function userConfig(file: string, lines: string): Promise<string> {
  const own = process.env.npm_config_userconfig ?? process.env.NPM_CONFIG_USERCONFIG ??
    join(process.env.HOME ?? "/", ".npmrc");
  const text = await readFile(own, "utf8").catch(() => "");
  await writeFile(file, `${text}\n${lines}\n`, { mode: 0o600 });
  return file;
}

/** The registry npm installs from (yarn 2+ does not read npm's settings). */
async function npmRegistry(o: RunOptions): Promise<string> {
  const lines = await run({
    label: "npm",
    command: o.npm ?? "npm",
    args: ["config", "get", "registry"],
    error: () => null,
    failure: (reason) => `npm config failed: ${reason}`,
    quiet: true,
  }, o);
  return lines.find((l) => /^https?:\/\//.test(l.trim()))?.trim() ?? "https://registry.npmjs.org/";
}

/** Runs a tool in `cwd` with the control plane's registry settings; its lines go to the log (but `quiet`) and are returned. */
function run(tool: Tool, o: RunOptions): Promise<string[]> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && NPM_ENV.test(k)) env[k] = v;
  Object.assign(env, o.env, tool.env);
  const hide = Object.values(o.env ?? {}).filter((v) => v.length >= 4);
  const errors: string[] = [];
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(tool.command, tool.args, { cwd: o.cwd, env, stdio: ["ignore", "pipe", "pipe"], signal: o.signal });
    } catch (err) {
      return reject(new BuildFailure(`cannot run ${tool.label}: ${(err as Error).message}`));
    }
    const onData = (buf: Buffer) => {
      for (const raw of buf.toString("utf8").split("\n")) {
        const line = raw.trim() ? npmLine(raw.trimEnd(), o.root, hide) : null;
        if (!line) continue;
        lines.push(line);
        if (!tool.quiet) o.log(`${tool.label}: ${line}`);
        const error = tool.error(line);
        if (error && errors.length < 3) errors.push(error);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("error", (err: NodeJS.ErrnoException) => {
      reject(
        new BuildFailure(
          err.code === "ENOENT"
            ? `${tool.label} is not installed where the control plane runs: it installs a LangGraph.js project's dependencies`
            : err.name === "AbortError"
            ? "the build was interrupted"
            : `cannot run ${tool.label}: ${err.message}`,
        ),
      );
    });
    child.on("close", (code) => {
      if (code === 0) return resolve(lines);
      const reason = [...new Set(errors)].join("; ") || `exit code ${code}`;
      reject(new BuildFailure(tool.failure(reason, lines)));
    });
  });
}
