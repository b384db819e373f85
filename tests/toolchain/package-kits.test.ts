/**
 * The conformance kits of `agentcli/testing`, from the installed package (see _package.ts),
 * against a plugin of each kind as a plugin author writes and tests it
 * (tests/fixtures/package-plugins/kits.test.ts, run with `node --test` in that project):
 * model (against the package's scripted model server), identity (against its token service),
 * sandbox (bubblewrap-isolated folders). The deploy target's kit runs in package.test.ts.
 *
 * Run: bash scripts/test.sh tests/toolchain/package-kits.test.ts
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { installPackage, NODE22, run } from "./_package.ts";

let work: string;
let project: string;

before(async () => {
  ({ work, project } = await installPackage());
});

after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test("the model, identity and sandbox kits run against the package's plugins from the installed package", async () => {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const { stdout } = await run(NODE22, ["--test", "--test-reporter=tap", "kits.test.ts"], {
    cwd: project,
    env,
    maxBuffer: 16 * 1024 * 1024,
  })
    .catch((err: { stdout: string }) => ({ stdout: err.stdout }));
  for (
    const suite of [
      "model provider conformance",
      "identity conformance: token_list",
      "sandbox conformance: sandbox-scratch",
    ]
  ) {
    assert.match(
      stdout,
      new RegExp(`^ok \\d+ - ${suite}`, "m"),
      `${suite}:\n${stdout.split("\n").filter((l) => /not ok|Error|expected|actual/.test(l)).join("\n")}`,
    );
  }
  assert.match(stdout, /# fail 0/);
});
