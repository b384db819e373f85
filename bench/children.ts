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
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import type { Client } from "@langchain/langgraph-sdk";
import { peerDevCommand } from "../tests/fixtures/dev-process.ts";

export const ROOT = new URL("..", import.meta.url).pathname;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile of `xs`. */
export const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** The one user message every benchmark run sends. */
export const input = { messages: [{ role: "user", content: "hi" }] };

/**
 * `threads.create` + `runs.wait` on a new thread, by `clients` concurrent clients, `total`
 * runs in all; each run's output is checked (the input and one answer). The client must allow
 * that many requests at once (`callerOptions.maxConcurrency`: the SDK's default is 4).
 */
export async function runLoad(
  client: Client,
  assistantId: string,
  clients: number,
  total: number,
  /** Messages a run's output has (2: the bench graph's; 2 + 2 x steps: bench/graph-steps.ts's). */
  messages = 2,
): Promise<{ runs: number; rps: number; p50: number; p99: number }> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next++ < total) {
      const s = performance.now();
      const th = await client.threads.create();
      const out = await client.runs.wait(th.thread_id, assistantId, { input }) as {
        messages?: unknown[];
        __error__?: unknown;
      };
      if (!out || out.__error__ || (out.messages?.length ?? 0) !== messages) {
        throw new Error(`unexpected run output: ${JSON.stringify(out).slice(0, 300)}`);
      }
      lat.push(performance.now() - s);
    }
  }));
  return {
    runs: lat.length,
    rps: (lat.length / (performance.now() - t0)) * 1000,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
  };
}

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

/** Busy and total jiffies of the whole machine (/proc/stat), to say how close to its CPUs a load ran. */
export function machineCpu(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

/** Writes the benchmark project (agent.toml, AGENTS.md) into `dir`; `anonymous` auth unless `auth` is false. */
export function writeBenchProject(dir: string, auth = true): void {
  writeFileSync(
    join(dir, "agent.toml"),
    `[agent]\nname = "bench-project"\ndescription = "benchmark project"\n${
      auth ? `\n[auth]\nprovider = "anonymous"\n` : ""
    }`,
  );
  writeFileSync(join(dir, "AGENTS.md"), "You are a benchmark agent.\n");
}

/** Starts `agentcli dev` on a new project in `dir` (the harness, or `args` such as `--graph`). */
export function startAgentcliDev(port: number, dir: string, env: NodeJS.ProcessEnv, args: string[] = []): ChildProcess {
  writeBenchProject(dir);
  return spawn(process.execPath, [
    join(ROOT, "bin/agentcli.js"),
    "dev",
    "--config",
    join(dir, "agent.toml"),
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    ...args,
  ], { stdio: ["ignore", "ignore", process.env.BENCH_VERBOSE ? "inherit" : "ignore"], cwd: dir, env, detached: true });
}

/**
 * Starts the peer, `@langchain/langgraph-cli dev` (in memory, no reload, no analytics: the
 * tests' `peerDevCommand`), on
 * bench/graph.ts as the graph "bench" (or on `graphs`: graph id to module path), in `dir`;
 * `args`: more of its flags (`--n-jobs-per-worker 200`).
 */
export function startPeer(
  port: number,
  dir: string,
  env: NodeJS.ProcessEnv,
  { graphs = { bench: join(ROOT, "bench/graph.ts") }, args = [] }: {
    graphs?: Record<string, string>;
    args?: string[];
  } = {},
): ChildProcess {
  writeFileSync(
    join(dir, "langgraph.json"),
    JSON.stringify({
      node_version: "22",
      graphs: Object.fromEntries(Object.entries(graphs).map(([id, path]) => [id, `./${relative(dir, path)}:graph`])),
      dependencies: ["."],
    }),
  );
  const [bin, ...peerArgs] = peerDevCommand(port);
  return spawn(bin!, [...peerArgs, "--config", join(dir, "langgraph.json"), ...args], {
    stdio: ["ignore", "ignore", process.env.BENCH_VERBOSE ? "inherit" : "ignore"],
    cwd: dir,
    env: { ...env, LANGGRAPH_CLI_NO_ANALYTICS: "1", BROWSER: "none" },
    detached: true,
  });
}

/** Stops a process group: SIGTERM, then SIGKILL after `graceMs`; resolves once it exited. */
export async function stopTree(proc: ChildProcess, graceMs = 500): Promise<void> {
  const exited = proc.exitCode !== null ? Promise.resolve() : new Promise<void>((r) => proc.once("exit", () => r()));
  try {
    process.kill(-proc.pid!, "SIGTERM");
  } catch { /* gone */ }
  await Promise.race([exited, sleep(graceMs)]);
  try {
    process.kill(-proc.pid!, "SIGKILL");
  } catch { /* gone */ }
  await Promise.race([exited, sleep(2000)]);
}

/** How the benchmark model answers (bench/model.ts): after `delayMs`; `tokens` streamed one per `tokenIntervalMs`; runs of `steps` tool calls. */
export interface ModelOptions {
  delayMs?: number;
  tokens?: number;
  tokenIntervalMs?: number;
  steps?: number;
}

/**
 * Starts the benchmark model server ("ok" for every request, at once or after `delayMs`, unless
 * told otherwise: `ModelOptions`); its OpenAI base URL (the model server's root: `url` less `/openai/v1`).
 */
export async function startModel(
  options: number | ModelOptions = 0,
): Promise<{ url: string; root: string; proc: ChildProcess }> {
  const o = typeof options === "number" ? { delayMs: options } : options;
  const flags = Object.entries({
    "--delay-ms": o.delayMs,
    "--tokens": o.tokens,
    "--token-interval-ms": o.tokenIntervalMs,
    "--steps": o.steps,
  }).flatMap(([flag, value]) => (value ? [flag, String(value)] : []));
  const proc = spawn(process.execPath, [join(ROOT, "bench/model.ts"), ...flags], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once("line", resolve);
    proc.once("exit", (code) => reject(new Error(`model server exited (${code})`)));
  });
  return { url: line.trim(), root: line.trim().replace(/\/openai\/v1$/, ""), proc };
}
