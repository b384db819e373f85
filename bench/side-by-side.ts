/**
 * What the streaming and multi-step benches (bench/tokens.ts, bench/steps.ts) share: the two
 * servers serving the same graphs (`agentcli dev --graph`, and the peer from its
 * langgraph.json), a client on the graph's assistant, bytes written to storage by a process
 * tree, and its peak RSS sampled during a load. Linux only (reads /proc).
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../plugins/compute/revision-process.ts";
import { startAgentcliDev, startPeer, stopTree, treeStats, waitOk } from "./children.ts";

/** What a server serves: graph id to module path; runs executed at once (absent: the server's default). */
export interface Serving {
  graphs: Record<string, string>;
  workers?: number;
}

export interface Side {
  name: string;
  start(port: number, dir: string, env: NodeJS.ProcessEnv, serving: Serving): ChildProcess;
}

/**
 * `agentcli dev` on a new project (a new embedded database), with the graphs as `--graph id=path`.
 * The bench's clients all share one address (as behind a load balancer): no per-client
 * connection bound (`AGENTCLI_MAX_CONNECTIONS_PER_CLIENT`, 128 by default, which 200 concurrent
 * streams and their `threads.create` exceed: 503s), as the peer has none.
 */
export const ours: Side = {
  name: "agentcli dev",
  start: (port, dir, env, { graphs, workers }) =>
    startAgentcliDev(
      port,
      dir,
      { ...env, AGENTCLI_MAX_CONNECTIONS_PER_CLIENT: "0", ...(workers ? { AGENTCLI_WORKERS: String(workers) } : {}) },
      Object.entries(graphs).flatMap(([id, path]) => ["--graph", `${id}=${path}`]),
    ),
};

/** `langgraph-cli dev` (in memory) on the same graphs. */
export const peer: Side = {
  name: "langgraph-cli dev",
  start: (port, dir, env, { graphs, workers }) =>
    startPeer(port, dir, env, { graphs, args: workers ? ["--n-jobs-per-worker", String(workers)] : [] }),
};

/** A started server: its process, a client allowing any number of requests at once, the graph's assistant. */
export interface Running {
  proc: ChildProcess;
  client: Client;
  assistantId: string;
  stop(): Promise<void>;
}

/** Starts `side` serving `graphs` in a new folder, waits for `/ok`, and finds the assistant of graph `graphId`. */
export async function startSide(
  side: Side,
  env: NodeJS.ProcessEnv,
  { graphId, ...serving }: Serving & { graphId: string },
): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-"));
  const port = await freePort("127.0.0.1");
  const proc = side.start(port, dir, env, serving);
  const stop = async () => {
    await stopTree(proc);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitOk(url, performance.now(), proc);
    const client = new Client({
      apiUrl: url,
      apiKey: null,
      callerOptions: { maxRetries: 0, maxConcurrency: Infinity },
    });
    const found = await client.assistants.search({ graphId, limit: 10 });
    if (found.length !== 1) throw new Error(`expected one assistant of graph "${graphId}", found ${found.length}`);
    return { proc, client, assistantId: found[0]!.assistant_id, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Bytes a process and its descendants caused to be written to storage so far (/proc/<pid>/io `write_bytes`). */
export function treeWriteBytes(root: number): number {
  const children = new Map<number, number[]>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch { /* gone */ }
  }
  let bytes = 0;
  const walk = (pid: number) => {
    try {
      bytes += Number(/write_bytes:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0);
    } catch { /* gone */ }
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return bytes;
}

/** Samples a process tree's RSS every `everyMs` until `stop()`, which returns the peak (MB). */
export function watchPeakRss(root: number, everyMs = 100): { stop(): number } {
  let peak = treeStats(root).rssMb;
  const timer = setInterval(() => void (peak = Math.max(peak, treeStats(root).rssMb)), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, treeStats(root).rssMb);
    },
  };
}

/** The server's CPU (ms), bytes written and peak RSS over `work`. */
export async function measured<T>(
  proc: ChildProcess,
  work: () => Promise<T>,
): Promise<{ value: T; cpuMs: number; writeBytes: number; peakRssMb: number }> {
  const cpu0 = treeStats(proc.pid!).cpuMs;
  const io0 = treeWriteBytes(proc.pid!);
  const peak = watchPeakRss(proc.pid!);
  try {
    const value = await work();
    return {
      value,
      cpuMs: treeStats(proc.pid!).cpuMs - cpu0,
      writeBytes: treeWriteBytes(proc.pid!) - io0,
      peakRssMb: peak.stop(),
    };
  } finally {
    peak.stop();
  }
}

/**
 * One run on a new thread streamed in messages-tuple mode, its model streaming `tokens` tokens (` t<i>`,
 * bench/model.ts `--tokens`): when each token reached the client (epoch ms, the model server's clock).
 */
export async function streamRun(
  server: Pick<Running, "client" | "assistantId">,
  prompt: string,
  tokens: number,
): Promise<number[]> {
  const thread = await server.client.threads.create();
  const got: number[] = [];
  const stream = server.client.runs.stream(thread.thread_id, server.assistantId, {
    input: { messages: [{ role: "user", content: prompt }] },
    streamMode: "messages-tuple",
  });
  for await (const event of stream) {
    const now = performance.timeOrigin + performance.now();
    if (event.event === "error") throw new Error(`run failed: ${JSON.stringify(event.data).slice(0, 300)}`);
    if (!event.event.startsWith("messages")) continue;
    const [message] = event.data as [{ content?: unknown; type?: string }, unknown];
    if (typeof message?.content !== "string" || !/ai/i.test(message.type ?? "")) continue;
    for (const m of message.content.matchAll(/ t(\d+)/g)) got[Number(m[1])] ??= now;
  }
  const missing = Array.from({ length: tokens }, (_, i) => i).filter((i) => got[i] === undefined);
  if (missing.length) {
    throw new Error(`run "${prompt}": ${missing.length} of ${tokens} tokens never reached the client`);
  }
  return got;
}
