/**
 * The README's install, as a new user runs it: `npm install -g .` from the checkout with a
 * fresh HOME and npm prefix, then `agentcli` from PATH on a project outside the checkout:
 * `init` (whose next steps name the command on PATH and a schema that resolves offline),
 * `deploy --dry-run` and `dev` answering /ok, stopped by SIGTERM.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { invocationCommand } from "../../core/cli/invocation.ts";
import { SERVING, type Serving, spawnServing } from "../_spawn-serving.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const README = readFileSync(join(ROOT, "README.md"), "utf8");

test("README: `npm install -g .` puts agentcli on PATH; init, deploy --dry-run and dev work on a project outside the checkout", async () => {
  assert.match(
    README,
    /^npm install -g \.(\s|$)/m,
    "README.md's install section no longer shows `npm install -g .` (update this test with it)",
  );
  const home = mkdtempSync(join(tmpdir(), "agentcli-install-"));
  const prefix = join(home, "npm-prefix");
  const work = join(home, "projects");
  mkdirSync(work);
  const env: Record<string, string> = {
    HOME: home,
    PATH: [join(prefix, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter),
    npm_config_prefix: prefix,
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
  };
  let dev: Serving | undefined;
  try {
    const install = spawnSync("npm", ["install", "-g", "."], { cwd: ROOT, env, encoding: "utf8" });
    assert.equal(install.status, 0, `${install.stdout}${install.stderr}`);
    assert.ok(existsSync(join(prefix, "bin", "agentcli")), "npm install -g . put no agentcli in the prefix's bin/");

    const init = spawnSync("agentcli", ["init", "myagent"], { cwd: work, env, encoding: "utf8" });
    assert.equal(init.status, 0, `${init.stdout}${init.stderr}`);
    assert.match(init.stdout, /^ {2}cd myagent$/m);
    assert.match(init.stdout, /^ {2}3\. agentcli dev /m, "agentcli is on PATH: the next steps say so");
    const toml = readFileSync(join(work, "myagent", "agent.toml"), "utf8");
    const schema = /^#:schema (\S+)$/m.exec(toml)?.[1];
    assert.ok(schema && !/^https?:/.test(schema), `the #:schema line needs the network: ${schema}`);
    const schemaJson = JSON.parse(readFileSync(join(work, "myagent", schema), "utf8"));
    assert.ok(schemaJson.properties.agent, "the schema the #:schema line names describes [agent]");

    const project = join(work, "myagent");
    const dry = spawnSync("agentcli", ["deploy", "--dry-run"], { cwd: project, env, encoding: "utf8" });
    assert.equal(dry.status, 0, `${dry.stdout}${dry.stderr}`);
    assert.match(dry.stdout, /Agent: +myagent/);

    dev = await spawnServing({
      serving: SERVING.dev,
      start: (port) =>
        spawn("agentcli", ["dev", "--port", String(port)], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] }),
    });
    assert.ok((await fetch(`${dev.url}/ok`)).ok, `agentcli dev did not answer /ok:\n${dev.output()}`);
    await dev.stop();
    dev = undefined;
  } finally {
    await dev?.stop("SIGKILL");
    rmSync(home, { recursive: true, force: true });
  }
});

test("next steps name `agentcli` only when PATH finds this very agentcli, else its absolute path", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-invocation-"));
  try {
    const script = join(ROOT, "bin", "agentcli.js");
    assert.equal(invocationCommand(script, { PATH: "/usr/bin:/bin" }), script);
    assert.equal(
      invocationCommand(script, { PATH: join(ROOT, "bin") }),
      script,
      "a bin/ holding agentcli.js, not agentcli",
    );
    assert.equal(
      invocationCommand(join(ROOT, "node_modules", ".bin", "agentcli"), { PATH: join(ROOT, "node_modules", ".bin") }),
      script,
      "node_modules/.bin is on PATH only inside npm",
    );
    assert.equal(invocationCommand(join(ROOT, "bin", "main.ts"), {}), "agentcli", "Deno on the sources");
    const spaced = join(dir, "my tools");
    mkdirSync(spaced);
    spawnSync("ln", ["-s", script, join(spaced, "agentcli")]);
    assert.equal(invocationCommand(join(spaced, "agentcli"), { PATH: spaced }), "agentcli");
    assert.equal(
      invocationCommand(join(spaced, "agentcli"), { PATH: "/usr/bin" }),
      script,
      "the real path, so a link removed later does not matter",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
