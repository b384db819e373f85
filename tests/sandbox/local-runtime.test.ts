/**
 * What only the local runtime (plugins/sandbox/local.ts) promises, beyond the conformance
 * suite: its limits (memory, processes, output size, wall time of everything a command
 * started), the network setting, and `--sandbox local` refused without bwrap.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import local from "../../plugins/sandbox/local.ts";
import type { Sandbox } from "../../core/kernel/hooks.ts";
import { cli, makeProject, removeProject } from "../toolchain/_project.ts";

const root = mkdtempSync(join(tmpdir(), "agentcli-local-runtime-"));
chmodSync(root, 0o711);
const boxes: Sandbox[] = [];
after(async () => {
  for (const b of boxes) await b.delete();
  rmSync(root, { recursive: true, force: true });
});

async function box(env: Record<string, string> = {}): Promise<Sandbox> {
  const sandbox = await local.hooks["sandbox:create"]({
    provider: "sandbox_a",
    key: `thread:${boxes.length}`,
    scope: "thread",
    template: "t",
    image: "python:3",
    env,
    host: { stateDir: join(root, "sandboxes"), hiddenPaths: [] },
  });
  boxes.push(sandbox!);
  return sandbox!;
}

test("output past AGENTCLI_SANDBOX_OUTPUT_KB is cut and marked truncated", async () => {
  const s = await box({ AGENTCLI_SANDBOX_OUTPUT_KB: "4" });
  const r = await s.execute("head -c 100000 /dev/zero | tr '\\0' x; echo; echo done");
  assert.equal(r.truncated, true);
  assert.equal(r.output.length, 4096);
  assert.equal(r.exitCode, 0);
});

test("memory: an allocation past AGENTCLI_SANDBOX_MEMORY_MB fails inside the sandbox", async () => {
  const s = await box({ AGENTCLI_SANDBOX_MEMORY_MB: "64" });
  const r = await s.execute("python3 -c 'b = bytearray(512 * 1024 * 1024); print(\"allocated\")'");
  assert.doesNotMatch(r.output, /allocated/);
  assert.notEqual(r.exitCode, 0);
});

test("processes: a fork storm stops at AGENTCLI_SANDBOX_MAX_PROCESSES", async () => {
  const s = await box({ AGENTCLI_SANDBOX_MAX_PROCESSES: "16" });
  const r = await s.execute(
    "for i in $(seq 40); do sleep 3 & done 2>&1 | head -1; sleep 0.2; ls /proc | grep -c '^[0-9]'",
    { timeoutMs: 30_000 },
  );
  const count = Number(r.output.split("\n").filter((l) => /^\d+$/.test(l)).at(-1));
  assert.ok(count <= 17, `at most 16 processes ran (saw ${count}): ${r.output}`);
});

test("timeout kills everything the command started", async () => {
  const s = await box();
  const started = Date.now();
  const r = await s.execute(`(sleep 100; echo late > /workspace/late.txt) & sleep 100`, { timeoutMs: 1000 });
  assert.equal(r.timedOut, true);
  assert.equal(r.exitCode, null);
  assert.ok(Date.now() - started < 20_000);
  const after = await s.execute("sleep 1; ls /workspace");
  assert.doesNotMatch(after.output, /late/);
});

test("network: none by default; AGENTCLI_SANDBOX_ALLOW_NETWORK=1 shares the host's", async () => {
  const { createServer } = await import("node:net");
  const server = createServer((c) => c.end("hello\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  try {
    const probe = `timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}; head -1 <&3' || echo unreachable`;
    assert.match((await (await box()).execute(probe)).output, /unreachable/);
    assert.match((await (await box({ AGENTCLI_SANDBOX_ALLOW_NETWORK: "1" })).execute(probe)).output, /hello/);
  } finally {
    server.close();
  }
});

test("a sandbox whose directory is gone is reported as not found", async () => {
  const s = await box();
  rmSync(join(root, "sandboxes", s.id), { recursive: true, force: true });
  await assert.rejects(s.execute("true"), { name: "SandboxNotFoundError" });
  await assert.rejects(
    async () =>
      local.hooks["sandbox:create"]({
        provider: "x",
        key: "k",
        scope: "thread",
        template: "t",
        image: "i",
        env: {},
        sandboxId: s.id,
        host: { stateDir: join(root, "sandboxes"), hiddenPaths: [] },
      }),
    { name: "SandboxNotFoundError" },
  );
});

test("--sandbox local is refused when bwrap is missing (with the install command) or a limit is not a number", () => {
  const dir = makeProject({
    "agent.toml": '[agent]\nname = "fixture"\nmodel = "openai:gpt-5"\n[sandbox]\nprovider = "sandbox_a"\n',
  });
  try {
    const r = cli(["dev", "--sandbox", "local", "--port", "0"], { cwd: dir, env: { PATH: "/nonexistent" } });
    assert.equal(r.code, 1);
    assert.match(r.output, /Cannot use --sandbox "local": bubblewrap \(the bwrap program\) is not installed/);
    assert.match(r.output, /apt-get install bubblewrap/);
    const badLimit = cli(["dev", "--sandbox", "local", "--port", "0"], {
      cwd: dir,
      env: { AGENTCLI_SANDBOX_CPUS: "lots" },
    });
    assert.equal(badLimit.code, 1);
    assert.match(
      badLimit.output,
      /Cannot use --sandbox "local": AGENTCLI_SANDBOX_CPUS="lots" is not a positive number: set it to the CPUs a sandbox may use together .*\(default 1\)/,
    );
    assert.doesNotMatch(badLimit.output, /\n\s+at /, "no stack trace");
    const unknown = cli(["dev", "--sandbox", "cloud", "--port", "0"], { cwd: dir });
    assert.equal(unknown.code, 2, "an unknown runtime is a usage error");
    assert.match(unknown.output, /Cannot use --sandbox "cloud": no such sandbox runtime/);
  } finally {
    removeProject(dir);
  }
});
