/**
 * The limit cases of the sandbox conformance suite (./sandbox-conformance.ts): a server whose
 * sandboxes get small limits (a 64 MB memory limit, 16 processes, 8 MB /tmp, a 16 MB
 * workspace, a tenth of a CPU), driven through the agent's `execute` tool, checks that going
 * over each one is a clear tool result: a non-zero exit code and a note naming the limit and
 * its variable. A runtime that says at start that it bounds only single processes (the local
 * runtime without a cgroup) is held to that: its per-process limits still hold, and a failed
 * command's result says what is and is not enforced.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";

/** What the limit cases need of the suite: a server started with extra environment, and a turn of tool calls. */
export interface LimitHarness {
  start(env: Record<string, string>, warn: (message: string) => void): Promise<LimitServer>;
  workdir: string;
}

/** A server of the limit cases: new threads, turns (tool calls in order; the tool results come back), stop. */
export interface LimitServer {
  threadId(): Promise<string>;
  turn(threadId: string, calls: Array<{ name: string; args: Record<string, unknown> }>): Promise<string[]>;
  stop(): Promise<void>;
}

/** The small limits the cases run with (the variables of the local runtime, see docs/security.md). */
export const SMALL_LIMITS = {
  AGENTCLI_SANDBOX_MEMORY_MB: "64",
  AGENTCLI_SANDBOX_MAX_PROCESSES: "16",
  AGENTCLI_SANDBOX_TMP_MB: "8",
  AGENTCLI_SANDBOX_WORKSPACE_MB: "16",
  AGENTCLI_SANDBOX_CPUS: "0.1",
};

const exec = (command: string) => ({ name: "execute", args: { command, timeout: 120 } });

/** Three Python processes of 40 MB each, alive at once (they wait for each other). */
const THREE_OF_40_MB = `for i in 1 2 3; do python3 -c 'import os, time
b = b"x" * (40 << 20)
open("/tmp/alive-%d" % os.getpid(), "w").close()
n = 0
while len([f for f in os.listdir("/tmp") if f.startswith("alive-")]) < 3 and n < 400:
    time.sleep(0.05); n += 1
print("HELD-" + "40MB")' & done; wait; echo all-ended`;

/** Registers the limit cases (inside the suite's describe). */
export function limitCases(harness: LimitHarness): void {
  describe("limits: each is a clear tool result, never the host's", () => {
    let server: LimitServer;
    let thread: string;
    const warnings: string[] = [];
    let whole = true;
    const run = async (...commands: string[]) => server.turn(thread, commands.map(exec));

    before(async () => {
      server = await harness.start(SMALL_LIMITS, (m) => warnings.push(m));
      thread = await server.threadId();
      whole = !warnings.some((w) => /limits hold per process only/.test(w));
    });
    after(async () => {
      await server?.stop();
    });

    test("memory: the sandbox's processes together stay under AGENTCLI_SANDBOX_MEMORY_MB", async () => {
      const [single, together] = await run('python3 -c \'b = b"x" * (256 << 20); print("allocated")\'', THREE_OF_40_MB);
      assert.doesNotMatch(single, /allocated/);
      assert.match(single, /exit code [1-9]/);
      if (whole) {
        assert.ok(
          (together.match(/HELD-40MB/g) ?? []).length < 3,
          `three processes of 40 MB cannot all live in 64 MB: ${together}`,
        );
        assert.match(
          together,
          /Sandbox limit: the sandbox's processes together reached its memory limit of 64 MB \(AGENTCLI_SANDBOX_MEMORY_MB\)/,
        );
      } else {
        assert.match(single, /Sandbox limits on this server hold per process[^\]]*64 MB of address space/);
      }
    });

    test("processes: a fork storm stops at AGENTCLI_SANDBOX_MAX_PROCESSES", async () => {
      // The storm runs in a subshell (bash gives up at a fork it cannot make); counted with builtins only.
      const [out] = await run(
        "(for i in $(seq 40); do sleep 30 & echo $! >> /tmp/pids; done) 2>/dev/null; n=0; while read -r p; do kill $p; n=$((n + 1)); done < /tmp/pids; echo started=$n; exit 7",
      );
      const count = Number(/started=(\d+)/.exec(out)?.[1]);
      assert.ok(count > 0 && count < 16, `fewer than 16 background processes started (saw ${count}): ${out}`);
      assert.match(out, /exit code 7/);
      if (whole) {
        assert.match(
          out,
          /Sandbox limit: the sandbox reached its limit of 16 processes and threads \(AGENTCLI_SANDBOX_MAX_PROCESSES\)/,
        );
      }
    });

    test("/tmp holds at most AGENTCLI_SANDBOX_TMP_MB", async () => {
      const [out] = await run("head -c 12M /dev/zero > /tmp/big; echo wrote=$?; df -k /tmp | tail -1");
      assert.match(out, /No space left on device/);
      assert.match(out, /wrote=1/);
      assert.match(out, /Sandbox limit: \/tmp and \/dev\/shm hold at most 8 MB each \(AGENTCLI_SANDBOX_TMP_MB\)/);
    });

    test("the workspace holds at most AGENTCLI_SANDBOX_WORKSPACE_MB: one big file, or many small ones", async () => {
      const wd = harness.workdir;
      const [big, many, cleaned] = await run(
        `head -c 40M /dev/zero > ${wd}/big.bin; echo wrote=$?`,
        `for i in 1 2 3 4 5 6; do head -c 4M /dev/zero > ${wd}/part-$i.bin; done; echo parts-written`,
        `rm -f ${wd}/*.bin; echo cleaned`,
      );
      assert.match(big, /File size limit exceeded|wrote=153/);
      assert.match(big, /Sandbox limit: \/workspace holds at most 16 MB \(AGENTCLI_SANDBOX_WORKSPACE_MB\)/);
      assert.match(many, /Sandbox limit: \/workspace holds at most 16 MB/);
      assert.match(cleaned, /cleaned/);
      assert.doesNotMatch(cleaned, /Sandbox limit/, "a command that makes room runs and is not blamed");
    });

    test("CPU: a busy loop gets about AGENTCLI_SANDBOX_CPUS of a CPU (with a cgroup)", async () => {
      // The command measures itself: CPU seconds used over the wall seconds it spun (a ratio, no time limit).
      const [out] = await run(
        `s=$(date +%s%N); timeout 2 sh -c 'while :; do :; done'; e=$(date +%s%N); times > /tmp/times; set -- $(tail -1 /tmp/times); echo "cpu=$1 wall=$(( (e - s) / 1000000 ))ms"`,
      );
      const m = /cpu=(\d+)m([\d.]+)s wall=(\d+)ms/.exec(out);
      assert.ok(m, out);
      const ratio = (Number(m[1]) * 60 + Number(m[2])) / (Number(m[3]) / 1000);
      if (whole) assert.ok(ratio < 0.3, `0.1 CPU allowed, used ${ratio.toFixed(2)}: ${out}`);
      else {assert.ok(
          warnings.some((w) => /its CPU are not bounded/.test(w)),
          `the start-up warning says CPU is not bounded: ${warnings.join("\n")}`,
        );}
    });

    test("the server said at start what it enforces when it has no cgroup", () => {
      if (whole) assert.deepEqual(warnings.filter((w) => /cgroup/.test(w)), []);
      else {assert.match(
          warnings.join("\n"),
          /local sandboxes get no cgroup here \(.+\), so their limits hold per process only/,
        );}
    });
  });
}
