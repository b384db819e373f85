/**
 * Benchmark: our agent server vs `@langchain/langgraph-cli dev` on the same one-node
 * fake-model graph (tests/fixtures/graphs/echo.ts), side by side in one process tree,
 * offline. Measures startup to first `/ok`, create-and-wait on new threads at 1 and 32
 * clients (runs/s, p50, p99), and time to the first SSE event; prints ratios (peer / ours).
 *
 *   npx node bench/server.ts [--runs 40] [--only ours|peer]
 *
 * Not part of the test suite. Each server runs as a child process on a free port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";

const ROOT = new URL("..", import.meta.url).pathname;
const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf("--runs") + 1] || 40) || 40;
const ONLY = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitOk(url: string, t0: number, proc: ChildProcess): Promise<number> {
  while (true) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode})`);
    try {
      if ((await fetch(`${url}/ok`)).ok) return performance.now() - t0;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Target { name: string; start(port: number, dir: string): ChildProcess }

const ours: Target = {
  name: "agentcli",
  start: (port, dir) => {
    const script = join(dir, "ours.ts");
    writeFileSync(script, `
import { createAgentServer } from ${JSON.stringify(join(ROOT, "core/server/app.ts"))};
import { listen } from ${JSON.stringify(join(ROOT, "core/server/node.ts"))};
import { silentLog } from ${JSON.stringify(join(ROOT, "core/server/log.ts"))};
const server = await createAgentServer({ graphs: { agent: async () => (await import(${JSON.stringify(join(ROOT, "tests/fixtures/graphs/echo.ts"))})).graph }, storage: { dataDir: ${JSON.stringify(join(dir, "db"))} }, log: silentLog, workers: 32 });
await listen(server, { port: ${port} });
`);
    return spawn(process.execPath, [script], { stdio: ["ignore", "ignore", "inherit"], cwd: ROOT });
  },
};

const peer: Target = {
  name: "langgraph-cli dev",
  start: (port, dir) => {
    writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ node_version: "22", graphs: { agent: `${join(ROOT, "tests/fixtures/graphs/echo.ts")}:graph` }, dependencies: ["."] }));
    return spawn(join(ROOT, "node_modules/.bin/langgraphjs"), ["dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload", "--config", join(dir, "langgraph.json")], {
      stdio: ["ignore", "ignore", "ignore"],
      cwd: ROOT,
      env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", BROWSER: "none" },
      detached: true,
    });
  },
};

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function load(client: Client, clients: number, total: number) {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next++ < total) {
      const s = performance.now();
      const th = await client.threads.create();
      await client.runs.wait(th.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }] } });
      lat.push(performance.now() - s);
    }
  }));
  return { rps: (lat.length / (performance.now() - t0)) * 1000, p50: pct(lat, 50), p99: pct(lat, 99) };
}

async function firstEvent(client: Client): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const th = await client.threads.create();
    const s = performance.now();
    for await (const _ of client.runs.stream(th.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: "values" })) {
      xs.push(performance.now() - s);
      break;
    }
  }
  return pct(xs, 50);
}

async function measure(target: Target) {
  const dir = mkdtempSync(join(tmpdir(), "agentcli-bench-"));
  const port = await freePort();
  const t0 = performance.now();
  const proc = target.start(port, dir);
  try {
    const url = `http://127.0.0.1:${port}`;
    const startup = await waitOk(url, t0, proc);
    const client = new Client({ apiUrl: url, apiKey: null });
    await load(client, 1, 3);
    const one = await load(client, 1, RUNS);
    const many = await load(client, 32, RUNS * 4);
    const sse = await firstEvent(client);
    return { startup, one, many, sse };
  } finally {
    try { process.kill(proc.pid!, "SIGTERM"); } catch { /* gone */ }
    try { process.kill(-proc.pid!, "SIGTERM"); } catch { /* not a group */ }
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Record<string, Awaited<ReturnType<typeof measure>>> = {};
for (const t of [ours, peer]) {
  if (ONLY && !t.name.startsWith(ONLY === "ours" ? "agentcli" : "langgraph")) continue;
  process.stderr.write(`measuring ${t.name}...\n`);
  results[t.name] = await measure(t);
}
const f = (n: number) => n.toFixed(1);
for (const [name, r] of Object.entries(results)) {
  console.log(`${name.padEnd(18)} startup ${f(r.startup)} ms | 1 client: ${f(r.one.rps)} runs/s p50 ${f(r.one.p50)} ms p99 ${f(r.one.p99)} ms | 32 clients: ${f(r.many.rps)} runs/s p50 ${f(r.many.p50)} ms p99 ${f(r.many.p99)} ms | first SSE event ${f(r.sse)} ms`);
}
const a = results["agentcli"], b = results["langgraph-cli dev"];
if (a && b) {
  console.log(`ratios (peer/ours; >1 means we are better): startup ${f(b.startup / a.startup)}x, 1-client p50 ${f(b.one.p50 / a.one.p50)}x, ` +
    `1-client runs/s ${f(a.one.rps / b.one.rps)}x, 32-client runs/s ${f(a.many.rps / b.many.rps)}x, 32-client p99 ${f(b.many.p99 / a.many.p99)}x, first SSE event ${f(b.sse / a.sse)}x`);
}
