/**
 * The benchmarks' child processes: the model server (bench/model.ts), `agentcli dev` on a
 * new project, readiness, process-tree RSS and CPU time, and teardown. Linux only (reads /proc).
 *
 * @example
 * const model = await startModel();
 * const dir = mkdtempSync(join(tmpdir(), "bench-"));
 * const proc = startAgentcliDev(port, dir, { ...process.env, OPENAI_BASE_URL: model.url });
 * await waitOk(`http://127.0.0.1:${port}`, performance.now(), proc);
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

export const ROOT = new URL("..", import.meta.url).pathname;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for the first `200` from `GET /ok`; returns the milliseconds since `t0`. */
export async function waitOk(url: string, t0: number, proc: ChildProcess): Promise<number> {
  while (true) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode})`);
    try {
      if ((await fetch(`${url}/ok`)).ok) return performance.now() - t0;
    } catch { /* not yet */ }
    await sleep(10);
  }
}

/**
 * RSS (MB) and CPU time used so far (user + system, ms) of a process and all its
 * descendants (Linux /proc; clock ticks taken as 100 per second, Linux's USER_HZ).
 */
export function treeStats(root: number): { rssMb: number; cpuMs: number } {
  const children = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
      cpu.set(Number(d), (Number(fields[11]) + Number(fields[12])) * 10);
    } catch { /* gone */ }
  }
  let kb = 0;
  let cpuMs = 0;
  const walk = (pid: number) => {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      kb += Number(m?.[1] ?? 0);
    } catch { /* gone */ }
    cpuMs += cpu.get(pid) ?? 0;
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return { rssMb: kb / 1024, cpuMs };
}

/** Writes the benchmark project (agent.toml, AGENTS.md) into `dir`; `anonymous` auth unless `auth` is false. */
export function writeBenchProject(dir: string, auth = true): void {
  writeFileSync(join(dir, "agent.toml"), `[agent]\nname = "bench-project"\ndescription = "benchmark project"\n${auth ? `\n[auth]\nprovider = "anonymous"\n` : ""}`);
  writeFileSync(join(dir, "AGENTS.md"), "You are a benchmark agent.\n");
}

/** Starts `agentcli dev` on a new project in `dir` (the harness, or `args` such as `--graph`). */
export function startAgentcliDev(port: number, dir: string, env: NodeJS.ProcessEnv, args: string[] = []): ChildProcess {
  writeBenchProject(dir);
  return spawn(process.execPath, [
    join(ROOT, "bin/agentcli.js"), "dev", "--config", join(dir, "agent.toml"), "--port", String(port), "--host", "127.0.0.1", ...args,
  ], { stdio: ["ignore", "ignore", process.env.BENCH_VERBOSE ? "inherit" : "ignore"], cwd: dir, env, detached: true });
}

/** Stops a process group: SIGTERM, then SIGKILL after `graceMs`; resolves once it exited. */
export async function stopTree(proc: ChildProcess, graceMs = 500): Promise<void> {
  const exited = proc.exitCode !== null ? Promise.resolve() : new Promise<void>((r) => proc.once("exit", () => r()));
  try { process.kill(-proc.pid!, "SIGTERM"); } catch { /* gone */ }
  await Promise.race([exited, sleep(graceMs)]);
  try { process.kill(-proc.pid!, "SIGKILL"); } catch { /* gone */ }
  await Promise.race([exited, sleep(2000)]);
}

/** Starts the benchmark model server ("ok" for every request, at once or after `delayMs`); its OpenAI base URL. */
export async function startModel(delayMs = 0): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [join(ROOT, "bench/model.ts"), "--delay-ms", String(delayMs)], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once("line", resolve);
    proc.once("exit", (code) => reject(new Error(`model server exited (${code})`)));
  });
  return { url: line.trim(), proc };
}
