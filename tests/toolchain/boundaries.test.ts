/**
 * The walls of DESIGN.md, checked on the import graph of the sources: core never imports a
 * plugin (the entry hands core the static list), plugins never import each other across
 * kinds, and the server, harness and control plane never import the CLI.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|js|mjs)$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Every relative module specifier of a file (static, re-export, dynamic import, type import), resolved from the repo root. */
function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
  return specs.map((s) => relative(ROOT, resolve(join(ROOT, dirname(file)), s)));
}

function offenders(fromDir: string, forbidden: (target: string, file: string) => boolean): string[] {
  return sources(fromDir).flatMap((file) => imports(file).filter((t) => forbidden(t, file)).map((t) => `${file} -> ${t}`));
}

test("core/ never imports plugins/ (the entry passes the built-in list in)", () => {
  assert.deepEqual(offenders("core", (t) => t.startsWith("plugins/")), []);
});

test("the check sees what it is meant to see (a planted import is found)", () => {
  const specs = imports("bin/main.ts");
  assert.ok(specs.includes("plugins/registry.ts"), `bin/main.ts should import plugins/registry.ts; saw ${specs.join(", ")}`);
});

test("a plugin never imports a plugin of another kind", () => {
  assert.deepEqual(offenders("plugins", (t, file) => t.startsWith("plugins/") && file !== "plugins/registry.ts" && t.split("/")[1] !== file.split("/")[1]), []);
});

test("the server, the harness and the control plane never import the CLI", () => {
  for (const dir of ["core/server", "core/harness", "core/platform"]) {
    assert.deepEqual(offenders(dir, (t) => t.startsWith("core/cli/") || t.startsWith("bin/")), [], dir);
  }
});
