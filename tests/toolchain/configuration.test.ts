/**
 * The configuration reference is complete and current: every `AGENTCLI_*` name in core/,
 * plugins/ and bin/ has a line in the settings catalogue (core/config/settings/<group>.ts), every line names a
 * variable the code still has, and docs/configuration.md is what the catalogue generates.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SETTINGS } from "../../core/config/settings-catalogue.ts";
import { configurationMarkdown } from "../../scripts/gen-configuration.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js|mjs)$/.test(e.name) && !e.parentPath.includes("node_modules"))
    .map((e) => join(e.parentPath, e.name));
}

/** Each `AGENTCLI_X` name in the code (a name ending in `_` is a prefix, not a variable), with a file that has it. */
function namesInCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of ["core", "plugins", "bin"].flatMap(sources)) {
    for (const [name] of readFileSync(file, "utf8").matchAll(/\bAGENTCLI_[A-Z0-9_]*[A-Z0-9]\b/g)) {
      if (!found.has(name)) found.set(name, file.slice(ROOT.length));
    }
  }
  return found;
}

test("every AGENTCLI_* variable of the code is in the settings catalogue", () => {
  const catalogued = new Set(SETTINGS.map((s) => s.name));
  const missing = [...namesInCode()].filter(([name]) => !catalogued.has(name));
  assert.deepEqual(
    missing.map(([name]) => name),
    [],
    `Add one line per variable to its group's file, core/config/settings/<group>.ts, then run \`node scripts/gen-configuration.ts\`:\n${
      missing
        .map(([name, file]) => `  setting("${name}", "<default>", "<meaning>"),   // read in ${file}`)
        .join("\n")
    }`,
  );
});

test("every AGENTCLI_* line of the catalogue names a variable the code still has", () => {
  const inCode = namesInCode();
  const stale = SETTINGS.filter((s) => s.name.startsWith("AGENTCLI_") && !inCode.has(s.name)).map((s) => s.name);
  assert.deepEqual(
    stale,
    [],
    "Remove these lines from core/config/settings/<group>.ts (no code reads them), then run `node scripts/gen-configuration.ts`",
  );
});

test("each variable is catalogued once, with a default and a meaning", () => {
  const seen = new Set<string>();
  for (const s of SETTINGS) {
    assert.ok(!seen.has(s.name), `${s.name} is in the settings catalogue (core/config/settings/) twice`);
    seen.add(s.name);
    assert.ok(
      s.default.trim() && s.meaning.trim(),
      `${s.name}: give its default and its meaning in core/config/settings/${s.group}.ts`,
    );
  }
});

test("docs/configuration.md is what the catalogue generates", () => {
  const doc = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
  assert.ok(
    doc === configurationMarkdown(),
    "docs/configuration.md is stale: run `node scripts/gen-configuration.ts` and commit the result",
  );
});
