/**
 * The package manager that installs a folder of a LangGraph.js project: the one its lockfile
 * belongs to, run with its frozen-lockfile install as LangGraph's builder runs it (its generated
 * Dockerfile picks `yarn.lock`, then `pnpm-lock.yaml`, then `package-lock.json`; the
 * `packageManager` field of package.json only picks the version here). No install script of any
 * package runs.
 *
 * pnpm and yarn are not needed on the control plane: the build installs the manager's own npm
 * package (`pnpm`, `yarn` for yarn 1, `@yarnpkg/cli-dist` for yarn 2+) with npm, its scripts off
 * and the control plane's registry settings, into the install folder, runs it with this Node and
 * removes it (npm's cache keeps the download). Corepack is not used: some Node builds drop it, it
 * refuses a registry mirror that serves no signatures ("No compatible signature found"), and it
 * fetches yarn 2+ from repo.yarnpkg.com instead of the registry.
 *
 * @example
 * const m = unitManager({ manifest, lock }); // { name: "pnpm", spec: "pnpm@10.34.8", ... }
 */

/** The lockfiles a folder may have, in the order LangGraph's builder picks them. */
export const LOCKFILES = ["yarn.lock", "pnpm-lock.yaml", "package-lock.json", "npm-shrinkwrap.json"] as const;

/**
 * The versions used when package.json has no `packageManager` naming the lockfile's manager: by
 * the lockfile's format (pnpm's `lockfileVersion`, yarn 2+'s `__metadata.version`), as a yarn 2+
 * refuses with `--immutable` a lockfile of another format; `latest` for any other.
 */
export const DEFAULT_MANAGERS = {
  pnpm: { "5": "7.33.7", "6": "8.15.9", latest: "10.34.8" } as Record<string, string>,
  yarn: "1.22.22",
  berry: { "4": "2.4.2", "6": "3.8.6", "8": "4.9.0", latest: "4.18.1" } as Record<string, string>,
};

/** A package manager other than npm, and how the build runs it. */
export interface Manager {
  /** The command users run (`pnpm`, `yarn`): in the log and in the advice of a stale lockfile. */
  name: "pnpm" | "yarn";
  /** The npm package spec the build installs (`pnpm@10.34.8`, `@yarnpkg/cli-dist@4.18.1`). */
  spec: string;
  /** Its executable inside the package. */
  bin: string;
  /** yarn 2+ (berry): configured by variables, not flags. */
  berry: boolean;
}

const decoder = new TextDecoder();
/** yarn 2+ message codes of a failed install: lockfile modified, exception, missing package, checksum, resolution. */
const BERRY_ERRORS = new Set(["YN0028", "YN0001", "YN0035", "YN0018", "YN0016", "YN0082"]);
const VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

/** The manager of a folder with this lockfile, or null for npm's lockfiles (and none). */
export function unitManager(
  unit: { manifest: Uint8Array; lock: { name: string; bytes: Uint8Array } | null },
): Manager | null {
  const lock = unit.lock;
  if (lock?.name !== "yarn.lock" && lock?.name !== "pnpm-lock.yaml") return null;
  const wanted = packageManagerField(unit.manifest);
  const text = decoder.decode(lock.bytes);
  if (lock.name === "pnpm-lock.yaml") {
    const format = text.match(/^lockfileVersion:\s*['"]?(\d+)/m)?.[1] ?? "";
    const version = wanted?.name === "pnpm"
      ? wanted.version
      : DEFAULT_MANAGERS.pnpm[format] ?? DEFAULT_MANAGERS.pnpm.latest;
    return { name: "pnpm", spec: `pnpm@${version}`, bin: "pnpm/bin/pnpm.cjs", berry: false };
  }
  const metadata = text.match(/^__metadata:\s*\n\s+version:\s*(\d+)/m);
  const berry = wanted?.name === "yarn" ? !wanted.version.startsWith("1.") : /^__metadata:/m.test(text);
  if (!berry) {
    const version = wanted?.name === "yarn" ? wanted.version : DEFAULT_MANAGERS.yarn;
    return { name: "yarn", spec: `yarn@${version}`, bin: "yarn/bin/yarn.js", berry };
  }
  const version = wanted?.name === "yarn"
    ? wanted.version
    : DEFAULT_MANAGERS.berry[metadata?.[1] ?? ""] ?? DEFAULT_MANAGERS.berry.latest;
  return { name: "yarn", spec: `@yarnpkg/cli-dist@${version}`, bin: "@yarnpkg/cli-dist/bin/yarn.js", berry };
}

/** package.json's `packageManager` (`pnpm@9.15.0+sha512.…`) as a name and exact version, or null. */
function packageManagerField(manifest: Uint8Array): { name: string; version: string } | null {
  let field: unknown;
  try {
    field = JSON.parse(decoder.decode(manifest)).packageManager;
  } catch {
    return null;
  }
  const m = typeof field === "string" ? field.match(/^(pnpm|yarn)@([^+]+)(\+.*)?$/) : null;
  return m && VERSION.test(m[2]!) ? { name: m[1]!, version: m[2]! } : null;
}

/**
 * The arguments and variables of the manager's frozen-lockfile install, its caches under `cache`
 * (removed after the install) and, for yarn 2+, the registry npm uses.
 */
export function managerInstall(
  m: Manager,
  o: { cache: string; registry: string },
): { args: string[]; env: Record<string, string> } {
  if (m.name === "pnpm") {
    return {
      args: [
        "install",
        "--frozen-lockfile",
        "--prod",
        "--ignore-scripts",
        "--reporter=append-only",
        "--config.confirmModulesPurge=false",
        `--store-dir=${o.cache}`,
      ],
      // The project's `packageManager` may name another manager or version: this one installs regardless.
      env: {
        CI: "true",
        npm_config_update_notifier: "false",
        npm_config_package_manager_strict: "false",
        npm_config_manage_package_manager_versions: "false",
      },
    };
  }
  if (!m.berry) {
    return {
      args: [
        "install",
        "--frozen-lockfile",
        "--production",
        "--ignore-scripts",
        "--non-interactive",
        "--no-progress",
        "--ignore-engines",
        `--cache-folder=${o.cache}`,
      ],
      env: { YARN_IGNORE_PATH: "1", YARN_DISABLE_SELF_UPDATE_CHECK: "1" },
    };
  }
  return {
    args: ["install", "--immutable"],
    env: {
      YARN_NODE_LINKER: "node-modules",
      YARN_ENABLE_SCRIPTS: "false",
      YARN_ENABLE_GLOBAL_CACHE: "false",
      YARN_CACHE_FOLDER: `${o.cache}/cache`,
      YARN_GLOBAL_FOLDER: `${o.cache}/global`,
      YARN_ENABLE_TELEMETRY: "false",
      YARN_ENABLE_PROGRESS_BARS: "false",
      YARN_ENABLE_COLORS: "false",
      YARN_ENABLE_HYPERLINKS: "false",
      // "" when the project's .yarnrc.yml names its own registry (a variable would override it).
      ...(o.registry ? { YARN_NPM_REGISTRY_SERVER: o.registry } : {}),
      YARN_IGNORE_PATH: "1",
    },
  };
}

/** The reason in a line of the manager's output, or null: pnpm's `ERR_PNPM_…`, yarn's `error …`, berry's `YN…` errors. */
export function managerError(m: Manager, line: string): string | null {
  const text = line.trim();
  if (m.name === "pnpm") return text.match(/^(ERR_PNPM_\S+\s+.*)$/)?.[1] ?? null;
  if (!m.berry) return text.match(/^error\s+(.*)$/)?.[1] ?? null;
  const berry = text.match(/^➤\s+(YN\d{4}):\s*(.*)$/);
  const message = berry && BERRY_ERRORS.has(berry[1]!) ? berry[2]!.replace(/^[│└┌·\s]+/, "") : "";
  // The lines of the diff YN0028 shows are not reasons.
  return message && !/^[+-]/.test(message) ? message : null;
}

/** Whether the manager's output says the lockfile does not match package.json (a frozen install refused it). */
export function staleLockfile(m: Manager, lines: readonly string[]): boolean {
  const stale = m.name === "pnpm"
    ? /ERR_PNPM_OUTDATED_LOCKFILE|ERR_PNPM_LOCKFILE_CONFIG_MISMATCH|not up to date with/
    : m.berry
    ? /lockfile would have been (modified|created)/
    : /lockfile needs to be updated/i;
  return lines.some((e) => stale.test(e));
}
