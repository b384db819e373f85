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
import { edges, floorOf, internalReaches, looseFiles, readDebt, UP_ALLOWED, upImports } from "./_layers.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|js|mjs)$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Every relative module specifier of a file (static, re-export, dynamic import, type import), resolved from the repo root. */
function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) =>
    m[1]!
  );
  return specs.map((s) => relative(ROOT, resolve(join(ROOT, dirname(file)), s)));
}

function offenders(fromDir: string, forbidden: (target: string, file: string) => boolean): string[] {
  return sources(fromDir).flatMap((file) =>
    imports(file).filter((t) => forbidden(t, file)).map((t) => `${file} -> ${t}`)
  );
}

test("core/ never imports plugins/ (the entry passes the built-in list in)", () => {
  assert.deepEqual(offenders("core", (t) => t.startsWith("plugins/")), []);
});

test("the check sees what it is meant to see (a planted import is found)", () => {
  const specs = imports("bin/main.ts");
  assert.ok(
    specs.includes("plugins/registry.ts"),
    `bin/main.ts should import plugins/registry.ts; saw ${specs.join(", ")}`,
  );
});

test("a plugin never imports a plugin of another kind", () => {
  assert.deepEqual(
    offenders(
      "plugins",
      (t, file) => t.startsWith("plugins/") && file !== "plugins/registry.ts" && t.split("/")[1] !== file.split("/")[1],
    ),
    [],
  );
});

test("the server, the harness and the control plane never import the CLI", () => {
  for (const dir of ["core/server", "core/harness", "core/platform"]) {
    assert.deepEqual(offenders(dir, (t) => t.startsWith("core/cli/") || t.startsWith("bin/")), [], dir);
  }
});

// ---- layers (issue 32) ----
// core/ is cut into floors (docs/architecture.md); tests/toolchain/_layers.ts holds the order.

test("core/ has no loose files: each belongs to a layer folder (docs/architecture.md)", () => {
  assert.deepEqual(looseFiles(), []);
});

test("no import goes up the layer order, except the listed ones (each with the step that removes it)", () => {
  const up = upImports(edges());
  assert.deepEqual(
    up.filter((e) => !(e in UP_ALLOWED)),
    [],
    "an import up the order: move the code down, or pass it in from above",
  );
  assert.deepEqual(
    Object.keys(UP_ALLOWED).filter((e) => !up.includes(e)),
    [],
    "gone: remove it from UP_ALLOWED in tests/toolchain/_layers.ts",
  );
});

test("no new import into another layer's internals, nor from a built-in plugin past the agentcli entry", () => {
  const reaches = new Set(internalReaches(edges()));
  const debt = readDebt();
  assert.deepEqual(
    [...reaches].filter((e) => !debt.includes(e)),
    [],
    "import the folder's index.ts (plugins: core/index.ts) instead",
  );
  assert.deepEqual(debt.filter((e) => !reaches.has(e)), [], "paid: remove it from tests/toolchain/layer-debt.json");
});

test("a built-in plugin imports nothing of core but core/index.ts (what a third-party plugin can import); no debt is allowed", () => {
  const reaches = internalReaches(edges()).filter((e) => e.startsWith("plugins/"));
  assert.deepEqual(
    reaches,
    [],
    "import it from core/index.ts (the agentcli entry); when a plugin needs more, export it there as documented API",
  );
  assert.deepEqual(
    readDebt().filter((e) => e.startsWith("plugins/")),
    [],
    "tests/toolchain/layer-debt.json may not list a plugin's import",
  );
});

test("the layer check sees what it is meant to see (planted imports are found)", () => {
  assert.equal(floorOf("core/kernel/hooks.ts"), 0);
  assert.deepEqual(upImports([{ from: "core/kernel/hooks.ts", to: "core/cli/dev.ts" }]), [
    "core/kernel/hooks.ts -> core/cli/dev.ts",
  ]);
  assert.deepEqual(upImports([{ from: "core/cli/dev.ts", to: "core/kernel/hooks.ts" }]), []);
  assert.deepEqual(
    internalReaches([{ from: "core/cli/dev.ts", to: "core/kernel/hooks.ts" }, {
      from: "core/cli/dev.ts",
      to: "core/kernel/index.ts",
    }]),
    ["core/cli/dev.ts -> core/kernel/hooks.ts"],
  );
  assert.deepEqual(
    internalReaches([{ from: "plugins/identity/x.ts", to: "core/kernel/hooks.ts" }, {
      from: "plugins/identity/x.ts",
      to: "core/index.ts",
    }]),
    ["plugins/identity/x.ts -> core/kernel/hooks.ts"],
  );
  assert.ok(
    edges().some((e) => e.from === "core/index.ts" && e.to.startsWith("core/kernel/")),
    "core/index.ts should import the kernel",
  );
});
