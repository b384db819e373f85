/**
 * The error catalogue (core/kernel/errors-data.ts) is whole and current: every entry is listed
 * once under its own name, a call site cannot pass the wrong values (checked by the TypeScript
 * compiler), only a wrong command line exits 2, and docs/errors.md is what the catalogue generates.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import * as catalogue from "../../core/kernel/errors-data.ts";
import { agentcliError, exitCodeOf, isUserError } from "../../core/kernel/errors.ts";
import { countSetting, secondsSetting, switchSetting } from "../../core/config/env-settings.ts";
import { expandEnv } from "../../core/config/mcp.ts";
import { errorsMarkdown } from "../../scripts/gen-errors.ts";
import { cli, makeProject, removeProject } from "./_project.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

test("every entry of the catalogue is in ERRORS once, under the name it is exported as", () => {
  const exported = Object.entries(catalogue).filter(([, v]) =>
    typeof v === "object" && v !== null && "code" in v && "title" in v
  );
  assert.ok(exported.length >= 8, "the catalogue's entries are found");
  for (const [name, entry] of exported) {
    assert.equal(
      (entry as catalogue.ErrorData).name,
      name,
      `${name}: its name field says "${(entry as catalogue.ErrorData).name}"`,
    );
    assert.ok(
      catalogue.ERRORS.includes(entry as catalogue.ErrorData),
      `${name}: add it to ERRORS in core/kernel/errors-data.ts`,
    );
  }
  assert.equal(new Set(catalogue.ERRORS.map((e) => e.name)).size, catalogue.ERRORS.length, "each name once in ERRORS");
  for (const e of catalogue.ERRORS) {
    assert.ok(e.code in catalogue.ERROR_CODES && e.title.trim(), `${e.name}: a known code and a title`);
  }
});

test("only a wrong command line exits 2; a bad environment variable exits 1 with ENV_INVALID", () => {
  const usage = Object.entries(catalogue.ERROR_CODES).filter(([, info]) => info.exit === 2).map(([code]) => code);
  assert.deepEqual(usage, ["ARGS_INVALID"]);
  for (
    const bad of [
      () => secondsSetting({ AGENTCLI_X_SECONDS: "soon" }, "AGENTCLI_X_SECONDS", { default: 30, meaning: "x waits" }),
      () => switchSetting({ AGENTCLI_X_ON: "maybe" }, "AGENTCLI_X_ON", { default: true, meaning: "x is on" }),
      () => countSetting({ AGENTCLI_X_COUNT: "-1" }, "AGENTCLI_X_COUNT", { default: 4, meaning: "xs at once" }),
    ]
  ) {
    assert.throws(bad, (err: unknown) => isUserError(err) && err.code === "ENV_INVALID" && exitCodeOf(err) === 1);
  }
  assert.throws(
    () => secondsSetting({ AGENTCLI_X_SECONDS: "soon" }, "AGENTCLI_X_SECONDS", { default: 30, meaning: "x waits" }),
    {
      message: 'Cannot start the server: AGENTCLI_X_SECONDS="soon" is not a number of seconds',
    },
  );
  const switchErr = (() => {
    try {
      switchSetting({ AGENTCLI_X_ON: "maybe" }, "AGENTCLI_X_ON", { default: true, meaning: "x is on" });
    } catch (err) {
      return err as { hint?: string };
    }
  })();
  assert.equal(switchErr?.hint, "Set it to 1 or 0: whether x is on; default 1.");
});

test("the CLI exits 1, not 2, for a bad environment variable, and names it without a stack", () => {
  const dir = makeProject();
  try {
    const r = cli(["dev", "--port", "0"], { cwd: dir, env: { AGENTCLI_WORKERS: "lots" } });
    assert.equal(r.code, 1, r.output);
    assert.match(
      r.stderr,
      /error: Cannot start the server: AGENTCLI_WORKERS="lots" is not a whole number from 1 to 10000/,
    );
    assert.match(r.stderr, /hint: Set it to the runs this replica executes at once/);
    assert.doesNotMatch(r.output, /\n\s+at /, "no stack trace");
  } finally {
    removeProject(dir);
  }
});

test("a catalogue entry renders its message and hint from the values", () => {
  const err = agentcliError(catalogue.EnvNotInRange, {
    name: "AGENTCLI_N",
    value: "0",
    min: 1,
    max: 9,
    fix: "Set it to 1..9.",
  });
  assert.equal(err.code, "ENV_INVALID");
  assert.equal(err.message, 'Cannot start the server: AGENTCLI_N="0" is not a whole number from 1 to 9');
  assert.equal(err.hint, "Set it to 1..9.");
  assert.equal(err.status, 422);
});

test("an entry whose values are lists renders them, and a call site may set the status", () => {
  assert.throws(
    () => expandEnv("${A}/${B}", { PATH: "/bin" }, 'the url of MCP server "docs" in mcp.json'),
    (err: unknown) => {
      assert.ok(isUserError(err));
      assert.equal(err.message, 'Cannot expand the url of MCP server "docs" in mcp.json: ${A}, ${B} are not set');
      assert.equal(err.hint, "Add A, B to .env (or the deployment's secrets).");
      assert.equal(err.code, "CREDENTIALS_MISSING");
      assert.equal(err.status, 422);
      return true;
    },
  );
});

test("a call site that passes the wrong values does not compile", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-errors-types-"));
  try {
    const file = join(dir, "site.ts");
    const kernel = join(ROOT, "core/kernel");
    writeFileSync(
      file,
      [
        `import { agentcliError } from ${JSON.stringify(join(kernel, "errors.ts"))};`,
        `import { EnvNotSeconds, FileFailed } from ${JSON.stringify(join(kernel, "errors-data.ts"))};`,
        `agentcliError(EnvNotSeconds, { name: "A", value: "b", meaning: "m", fallback: 1 });`, // right
        `agentcliError(EnvNotSeconds, { name: "A", value: "b", meaning: "m" });`, // a value missing
        `agentcliError(EnvNotSeconds, { name: "A", value: "b", meaning: "m", fallback: "1" });`, // a value of the wrong type
        `agentcliError(FileFailed);`, // no values at all
        "",
      ].join("\n"),
    );
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: ["node"],
      typeRoots: [join(ROOT, "node_modules/@types")],
    });
    const lines = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName === file)
      .map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1);
    assert.deepEqual([...new Set(lines)].sort(), [4, 5, 6], "lines 4-6 are wrong call sites, line 3 is right");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("docs/errors.md is what the catalogue generates", () => {
  const doc = readFileSync(join(ROOT, "docs/errors.md"), "utf8");
  assert.ok(doc === errorsMarkdown(), "docs/errors.md is stale: run `node scripts/gen-errors.ts` and commit it");
});
