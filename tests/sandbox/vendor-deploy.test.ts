/**
 * `deploy` of a project whose `[sandbox]` is a vendor's: the dry run (text and --json) names
 * the vendor's real npm package under Requires and, without the vendor's key, lists the key
 * under what a real deploy would refuse; a real deploy refuses up front naming the variable.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cli, makeProject, removeProject } from "../toolchain/_project.ts";

for (
  const [provider, key, pkg] of [["sandbox_a", "SANDBOX_A_API_KEY", "@daytonaio/sdk"], [
    "sandbox_c",
    "SANDBOX_C_API_KEY",
    "@runloop/api-client",
  ]] as const
) {
  test(`deploy with [sandbox] provider = "${provider}": requires ${pkg}; without ${key} a dry run lists it and a real deploy refuses`, () => {
    const dir = makeProject({
      "agent.toml": `[agent]\nname = "fixture"\nmodel = "openai:gpt-5"\n\n[sandbox]\nprovider = "${provider}"\n`,
    });
    try {
      const env = { PLATFORM_API_KEY: "pk-test" };
      const text = cli(["deploy", "--dry-run"], { cwd: dir, env });
      assert.equal(text.code, 0, text.output);
      assert.match(text.stdout, new RegExp(`Requires: .*${pkg.replace("/", "\\/")}`));
      assert.match(
        text.stdout,
        new RegExp(
          `A real deploy would refuse: these variables are not set:\\n {2}- ${key} \\(for sandbox provider "${provider}"\\)`,
        ),
      );
      const json = JSON.parse(cli(["deploy", "--dry-run", "--json"], { cwd: dir, env }).stdout);
      assert.ok(json.requires.packages.includes(pkg), JSON.stringify(json.requires));
      assert.deepEqual(json.missing_env, [`${key} (for sandbox provider "${provider}")`]);
      const withKey = JSON.parse(
        cli(["deploy", "--dry-run", "--json"], { cwd: dir, env: { ...env, [key]: "vendor-key-value" } }).stdout,
      );
      assert.deepEqual(withKey.missing_env, []);
      assert.ok(!JSON.stringify(withKey).includes("vendor-key-value"), "the key's value is never shown");
      const real = cli(["deploy"], { cwd: dir, env });
      assert.notEqual(real.code, 0);
      assert.match(real.stderr, new RegExp(`${key} is not set \\(for sandbox provider "${provider}"\\)`));
    } finally {
      removeProject(dir);
    }
  });
}
