/** `agentcli dev` as a process: a config error on reload is reported once, in dev's own words. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeProject, removeProject } from "./_project.ts";

const CLI = new URL("../../bin/agentcli.js", import.meta.url).pathname;

test("a reload error names the problem without a doubled 'error:' or the one-shot 'run the command again' hint", async () => {
  const dir = makeProject();
  const child = spawn(process.execPath, [CLI, "dev", "--port", "0", "--host", "127.0.0.1"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters: Array<() => void> = [];
  const onData = (b: Buffer) => {
    out += b.toString();
    waiters.splice(0).forEach((w) => w());
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waitFor = (re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (re.test(out)
        ? resolve()
        : child.exitCode !== null
        ? reject(new Error(`dev exited:\n${out}`))
        : waiters.push(check));
      check();
      void exited.then(check);
    });
  try {
    await waitFor(/is running/);
    writeFileSync(join(dir, "agent.toml"), '[agent]\nname = 42\nmodel = "openai:gpt-5"\n');
    await waitFor(/Still serving the last good version/);
    const errorLines = out.split("\n").filter((l) => l.includes("[dev] error:"));
    assert.equal(errorLines.length, 1, out);
    assert.match(errorLines[0]!, /^\[dev\] error: Cannot load project "agent\.toml": 1 problem$/);
    assert.match(out, /agent\.toml:2: \[agent\]\.name must be a string \(got integer\)/);
    assert.doesNotMatch(out, /error: error:/);
    assert.doesNotMatch(out, /run the command again/);
    assert.match(out, /fix the project and save to reload/);
  } finally {
    child.kill("SIGINT");
    await exited;
    removeProject(dir);
  }
});
