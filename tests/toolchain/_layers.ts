/**
 * The layer order of core/ (docs/architecture.md) as data, and the import graph it is checked on:
 * each folder of a floor may import its own floor and the floors below, never above; another
 * folder is reached through its index.ts; a built-in plugin reaches core only through
 * core/index.ts (the `agentcli` entry). Used by boundaries.test.ts.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DEBT_FILE = join(ROOT, "tests/toolchain/layer-debt.json");

/** The floors, bottom up. */
export const LAYERS: string[][] = [
  ["core/kernel"],
  ["core/config", "core/bundle", "core/auth", "core/storage"],
  ["core/harness", "core/engine"],
  ["core/server", "core/platform"],
  ["core/testing"],
  ["core/cli"],
];

/**
 * Imports that go up the order today, each with why and the step of issue 32 that removes it
 * (docs/architecture.md, "Steps"). A new entry needs the same: a reason and a step.
 */
export const UP_ALLOWED: Record<string, string> = {};

/** An import: the importing file and the file it names, both repo paths. */
export interface Edge {
  from: string;
  to: string;
  /** Named only by `import("...")` (loaded when the code runs, not with the importing file). */
  dynamic?: boolean;
}

const CODE = /\.(ts|tsx|mts|js|mjs)$/;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && CODE.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split("\\").join("/"));
}

/** Every relative import of core/ and plugins/ (static, type, re-export, dynamic), found by the TypeScript scanner. */
export function edges(): Edge[] {
  return ["core", "plugins"].flatMap(sources).flatMap((from) => {
    const text = readFileSync(join(ROOT, from), "utf8");
    const dynamic = new Set([...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]));
    const fixed = new Set([...text.matchAll(/(?:\bfrom|^import)\s+"([^"]+)"/gm)].map((m) => m[1]));
    return ts.preProcessFile(text, true, true).importedFiles
      .map((i) => i.fileName)
      .filter((s) => s.startsWith("./") || s.startsWith("../"))
      .map((s) => ({
        from,
        to: relative(ROOT, resolve(ROOT, dirname(from), s)).split("\\").join("/"),
        dynamic: dynamic.has(s) && !fixed.has(s),
      }));
  });
}

/**
 * The modules a layer's index.ts re-exports from (`export ... from "./x.ts"`): its public
 * modules. A dynamic `import()` from another layer may name one of them directly, to load it
 * when it is needed (the start of `dev` listens before the server's modules load).
 */
export function publicModules(layer: string): Set<string> {
  const index = join(ROOT, layer, "index.ts");
  return new Set(
    [...readFileSync(index, "utf8").matchAll(/^export\b[^;]*?from\s+"(\.[^"]+)"/gms)]
      .map((m) => relative(ROOT, resolve(dirname(index), m[1]!)).split("\\").join("/")),
  );
}

/** The layer folder of a repo path, or undefined outside core's layers. */
export function layerOf(file: string): string | undefined {
  return LAYERS.flat().find((d) => file.startsWith(d + "/"));
}

/** The floor of a repo path (0 = kernel), or undefined outside core's layers. */
export function floorOf(file: string): number | undefined {
  const layer = layerOf(file);
  return layer === undefined ? undefined : LAYERS.findIndex((floor) => floor.includes(layer));
}

const key = (e: Edge) => `${e.from} -> ${e.to}`;

/** Imports from a layer to a higher floor. */
export function upImports(all: Edge[]): string[] {
  return all.filter((e) => {
    const a = floorOf(e.from);
    const b = floorOf(e.to);
    return a !== undefined && b !== undefined && b > a;
  }).map(key);
}

/** Imports into another layer's internals (not its index.ts), and plugin imports of core other than core/index.ts. */
export function internalReaches(all: Edge[]): string[] {
  return all.filter((e) => {
    if (e.from.startsWith("plugins/")) return e.to.startsWith("core/") && e.to !== "core/index.ts";
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (a === undefined || b === undefined || a === b || e.to === `${b}/index.ts`) return false;
    return !(e.dynamic && publicModules(b).has(e.to));
  }).map(key);
}

/** Files directly in core/ other than the public entry: each belongs in a layer folder. */
export function looseFiles(): string[] {
  return sources("core").filter((f) => !f.includes("/", "core/".length) && f !== "core/index.ts");
}

/** The internal reaches that exist today (layer-debt.json): later steps empty it; it never grows. */
export function readDebt(): string[] {
  return JSON.parse(readFileSync(DEBT_FILE, "utf8")) as string[];
}

/** Writes layer-debt.json from the tree as it is (issue 32's step 1 runs this once). */
export function writeDebt(): void {
  writeFileSync(DEBT_FILE, JSON.stringify([...new Set(internalReaches(edges()))].sort(), null, 1) + "\n");
}
