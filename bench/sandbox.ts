/**
 * `npm run bench:sandbox`: what the local sandbox runtime (bubblewrap) costs, beside the same
 * command run directly with `bash -c` in this process tree.
 *
 * - runtime: a new sandbox's first `execute` (create + run) and a warm `execute`, through the
 *   plugin's `Sandbox` (plugins/sandbox/local.ts);
 * - agent server: a run on a new thread whose one tool call is `execute` (sandbox creation,
 *   skills copied in, the mapping row) and the same run on a thread that has its sandbox,
 *   beside a run of the same shape whose tool call is `write_todos` (no sandbox), through
 *   `hostBundle` with `--sandbox local`, the LangGraph SDK and the model server; the
 *   difference is what `execute` adds to a run, shown as a multiple of `bash -c`.
 *
 * Usage: npm run bench:sandbox -- [--n 20] [--json]
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Client } from "@langchain/langgraph-sdk";
import local from "../plugins/sandbox/local.ts";
import { builtinPlugins } from "../plugins/registry.ts";
import { PluginDriver } from "../core/kernel/plugin-driver.ts";
import { loadProject } from "../core/config/load.ts";
import { buildBundle, readBundle } from "../core/bundle/bundle.ts";
import { hostBundle } from "../core/server/host/agent-host.ts";
import { silentLog } from "../core/kernel/log.ts";
import { startModelServer } from "../tests/fixtures/model-server/server.ts";

const args = process.argv.slice(2);
const n = Number(args[args.indexOf("--n") + 1]) || 20;
const json = args.includes("--json");
const COMMAND = "echo hello";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}
const bash = () =>
  new Promise<void>((resolve, reject) => {
    const c = spawn("bash", ["-c", COMMAND], { stdio: ["ignore", "pipe", "pipe"] });
    c.stdout.resume();
    c.on("error", reject).on("close", () => resolve());
  });

const root = mkdtempSync(join(tmpdir(), "agentcli-bench-sandbox-"));
chmodSync(root, 0o711);
const results: Record<string, number> = {};
try {
  // Runtime level.
  const host = { stateDir: join(root, "runtime"), hiddenPaths: [] };
  const bashTimes: number[] = [];
  const first: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < n; i++) {
    bashTimes.push(await time(bash));
    let box: Awaited<ReturnType<typeof local.hooks["sandbox:create"]>>;
    first.push(
      await time(async () => {
        box = await local.hooks["sandbox:create"]({
          provider: "sandbox_a",
          key: `thread:${i}`,
          scope: "thread",
          template: "t",
          image: "i",
          env: {},
          host,
        });
        await box!.execute(COMMAND);
      }),
    );
    warm.push(await time(() => box!.execute(COMMAND)));
    await box!.delete();
  }
  results.bash_ms = median(bashTimes);
  results.runtime_first_execute_ms = median(first);
  results.runtime_warm_execute_ms = median(warm);

  // Agent server level.
  const model = await startModelServer();
  const dir = join(root, "project");
  mkdirSync(join(dir, "skills", "hello"), { recursive: true });
  writeFileSync(
    join(dir, "agent.toml"),
    '[agent]\nname = "bench"\nmodel = "openai:gpt-test"\n\n[sandbox]\nprovider = "sandbox_a"\n',
  );
  writeFileSync(join(dir, "AGENTS.md"), "Bench.\n");
  writeFileSync(
    join(dir, "skills", "hello", "SKILL.md"),
    "---\nname: hello\ndescription: Says hello.\n---\nRun echo.\n",
  );
  const driver = new PluginDriver(builtinPlugins);
  const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.openaiBaseUrl, AGENTCLI_SANDBOX_IDLE_SECONDS: "0" };
  const project = await loadProject(join(dir, "agent.toml"), { driver, env, requireEnv: false, cwd: dir });
  const bundle = await readBundle((await buildBundle(project, { driver, version: "bench" })).bytes);
  const server = await hostBundle({
    bundle,
    driver,
    env: project.env,
    mode: "dev",
    dataDir: join(root, "db"),
    port: 0,
    host: "127.0.0.1",
    log: silentLog,
    sandboxRuntime: "local",
    sandboxDir: join(root, "sandboxes"),
    privatePaths: [dir],
  });
  try {
    const client = new Client({ apiUrl: `http://127.0.0.1:${server.listening.port}` });
    const run = (thread: string) => {
      model.script({ toolCalls: [{ name: "execute", args: { command: COMMAND } }] }, { text: "done" });
      return client.runs.wait(thread, "agent", { input: { messages: [{ role: "user", content: "go" }] } });
    };
    // The baseline run has the same shape (one tool call, two model calls) with a tool that
    // does not touch the sandbox.
    const noTool = (thread: string) => {
      model.script({
        toolCalls: [{ name: "write_todos", args: { todos: [{ content: "bench", status: "completed" }] } }],
      }, { text: "done" });
      return client.runs.wait(thread, "agent", { input: { messages: [{ role: "user", content: "go" }] } });
    };
    await run((await client.threads.create()).thread_id); // warm-up: graph and modules loaded
    const newThread: number[] = [];
    const warmThread: number[] = [];
    const plain: number[] = [];
    const runs = Math.max(5, Math.floor(n / 2));
    for (let i = 0; i < runs; i++) {
      const t = (await client.threads.create()).thread_id;
      newThread.push(await time(() => run(t)));
      warmThread.push(await time(() => run(t)));
      plain.push(await time(() => noTool(t)));
    }
    results.server_run_without_tool_ms = median(plain);
    results.server_first_execute_run_ms = median(newThread);
    results.server_warm_execute_run_ms = median(warmThread);
  } finally {
    await server.close();
    await model.close();
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const r = results;
const rows: Array<[string, number, string]> = [
  ["bash -c (baseline)", r.bash_ms!, "1.0x"],
  [
    "runtime: new sandbox + first execute",
    r.runtime_first_execute_ms!,
    `${(r.runtime_first_execute_ms! / r.bash_ms!).toFixed(1)}x bash`,
  ],
  [
    "runtime: warm execute",
    r.runtime_warm_execute_ms!,
    `${(r.runtime_warm_execute_ms! / r.bash_ms!).toFixed(1)}x bash`,
  ],
  ["server: run with write_todos (baseline)", r.server_run_without_tool_ms!, ""],
  [
    "server: run with execute, new thread",
    r.server_first_execute_run_ms!,
    `+${(r.server_first_execute_run_ms! - r.server_run_without_tool_ms!).toFixed(1)} ms = ${
      ((r.server_first_execute_run_ms! - r.server_run_without_tool_ms!) / r.bash_ms!).toFixed(1)
    }x bash`,
  ],
  [
    "server: run with execute, warm thread",
    r.server_warm_execute_run_ms!,
    `+${(r.server_warm_execute_run_ms! - r.server_run_without_tool_ms!).toFixed(1)} ms = ${
      ((r.server_warm_execute_run_ms! - r.server_run_without_tool_ms!) / r.bash_ms!).toFixed(1)
    }x bash`,
  ],
];
if (json) console.log(JSON.stringify(results));
else {
  console.log(
    `local sandbox runtime (bubblewrap), "${COMMAND}", medians of ${n} (server: ${Math.max(5, Math.floor(n / 2))})`,
  );
  for (const [name, ms, ratio] of rows) console.log(`${name.padEnd(40)} ${ms.toFixed(1).padStart(8)} ms   ${ratio}`);
}
