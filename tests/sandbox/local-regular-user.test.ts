/**
 * The local runtime with the server running as a regular user, when these tests run as root
 * (as CI does): the conformance suite (limits included), the runtime's own tests and dev on a
 * new project run again in a child test process under uid/gid 65534 (`setpriv`), where no
 * cgroup can be made, so the per-process limits, the tool-result notes and the start-up
 * warning of that case are checked. Run as a regular user already, those files are that run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";

const REGULAR = "65534";
const asRoot = process.getuid?.() === 0;

/** The first directory on the way to `path` that other users cannot enter, or null. */
function closedAncestor(path: string): string | null {
  for (let d = dirname(realpathSync(path));; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return d;
    if (d === dirname(d)) return null;
  }
}

test("as a regular user: the local runtime's conformance suite and its own tests pass", {
  skip: !asRoot && "running as a regular user already: local.test.ts and local-runtime.test.ts are this run",
}, async () => {
  for (const path of [process.cwd(), process.execPath]) {
    const closed = closedAncestor(path);
    assert.equal(
      closed,
      null,
      `uid ${REGULAR} cannot enter ${closed}, so it cannot run ${path}: check the repository out where every user can read it (or run the tests as a regular user)`,
    );
  }
  const home = mkdtempSync(join(tmpdir(), "agentcli-regular-user-"));
  chmodSync(home, 0o777);
  try {
    const files = [
      "tests/sandbox/local.test.ts",
      "tests/sandbox/local-runtime.test.ts",
      "tests/sandbox/local-dev-new-project.test.ts",
    ];
    // One process for the files (no isolation): its report is plain TAP on stdout, read below.
    const isolation = process.allowedNodeEnvironmentFlags.has("--test-isolation")
      ? "--test-isolation=none"
      : "--experimental-test-isolation=none";
    const args = [
      `--reuid=${REGULAR}`,
      `--regid=${REGULAR}`,
      "--clear-groups",
      "--",
      process.execPath,
      "--test",
      isolation,
      "--test-reporter=tap",
      ...files,
    ];
    // Without NODE_TEST_CONTEXT the child is a test run of its own, not a part of this one.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const child = spawn("setpriv", args, {
      cwd: process.cwd(),
      env: { ...env, HOME: home, TMPDIR: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    const failures = out.split("\n").filter((l) => /^\s*not ok/.test(l));
    assert.equal(code, 0, `the run as uid ${REGULAR} failed:\n${failures.join("\n")}\n${out.slice(-6000)}`);
    assert.match(out, /^# fail 0$/m);
    assert.match(out, /ok \d+ - the server said at start what it enforces when it has no cgroup/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
