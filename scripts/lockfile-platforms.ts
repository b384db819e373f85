/**
 * Completes package-lock.json with the other platforms' optional binary packages.
 *
 * The registry mirror on our build machines carries only linux-x64 builds of packages that ship
 * per-platform binaries (`@deno/*`, `@tailwindcss/oxide-*`), so `npm install` writes a lockfile
 * without the entries for the other platforms and `npm ci` then refuses it as out of sync. This
 * adds each missing entry (version from the parent's `optionalDependencies`, `os`/`cpu` from the
 * package name) so `npm ci` accepts the lockfile and skips them on non-matching platforms.
 *
 * Run after any `npm install` that rewrites the lockfile: `node scripts/lockfile-platforms.ts`.
 */
import { readFileSync, writeFileSync } from "node:fs";

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

const OS = ["android", "darwin", "freebsd", "linux", "win32", "openbsd", "netbsd", "sunos", "aix"];
const CPU = ["arm64", "x64", "arm", "ia32", "wasm32", "riscv64", "ppc64", "s390x", "loong64", "mips64el"];

/** Infers `os` and `cpu` from a platform package name such as `@deno/win32-arm64`. */
export function platformOf(name: string): { os?: string[]; cpu?: string[] } {
  const parts = name.split("/").pop()!.split("-");
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  return { ...(os ? { os: [os] } : {}), ...(cpu ? { cpu: [cpu] } : {}) };
}

const path = process.argv[2] ?? "package-lock.json";
const lock = JSON.parse(readFileSync(path, "utf8")) as { packages: Record<string, LockEntry> };
let added = 0;
for (const [where, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = where === "" ? "" : `${where}/`;
    const nested = `${base}node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[`node_modules/${name}`]) continue;
    const flags: LockEntry = entry.dev ? { dev: true } : entry.devOptional ? { devOptional: true } : {};
    lock.packages[`node_modules/${name}`] = { version, ...platformOf(name), ...flags, optional: true };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
lock.packages = sorted;
writeFileSync(path, JSON.stringify(lock, null, 2) + "\n");
console.log(`lockfile-platforms: added ${added} optional platform entr${added === 1 ? "y" : "ies"} to ${path}`);
