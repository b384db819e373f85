/**
 * The single executable (`dist/agentcli`, after `npm run build`) contains the vendor SDKs and
 * they work there (the SDKs load some modules at run time, which the executable must have
 * bundled): `dist/agentcli dev` of a `sandbox_a` (Daytona), a `sandbox_b` (Modal, over gRPC)
 * and a `sandbox_c` (Runloop) agent,
 * against the vendors' local stand-ins, copies a skill in (upload), writes, runs and reads a
 * file (download); `deploy --dry-run --json` names the partner package; the keys are never
 * printed. Skipped when the executable is not built.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { SERVING, spawnServing } from "../_spawn-serving.ts";
import { startModelServer } from "../fixtures/model-server/server.ts";
import { startDaytonaStandIn } from "../fixtures/sandbox-vendors/daytona/server.ts";
import { startRunloopStandIn } from "../fixtures/sandbox-vendors/runloop/server.ts";
import { startModalStandIn } from "../fixtures/sandbox-vendors/modal/server.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const BUILT = join(ROOT, "dist/agentcli");
const skip = existsSync(BUILT) ? false : "dist/agentcli is not built (npm run build)";
// A copy outside the checkout: next to the repository's node_modules, a module the executable
// failed to bundle would still be found on disk (it resolves from its own directory).
const exeDir = mkdtempSync(join(tmpdir(), "agentcli-exe-"));
const EXE = join(exeDir, "agentcli");
if (!skip) copyFileSync(BUILT, EXE), chmodSync(EXE, 0o755);
const KEY = `key_${crypto.randomUUID().replace(/-/g, "")}`;
const cleanups: Array<() => Promise<unknown> | unknown> = [() => rmSync(exeDir, { recursive: true, force: true })];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function vendors() {
  const daytona = await startDaytonaStandIn({ apiKey: KEY });
  const runloop = await startRunloopStandIn({ apiKey: KEY });
  const modal = await startModalStandIn({ tokenSecret: KEY });
  cleanups.push(() => daytona.close(), () => runloop.close(), () => modal.close());
  return {
    sandbox_a: { package: "@daytonaio/sdk", env: { SANDBOX_A_API_KEY: KEY, SANDBOX_A_API_URL: daytona.apiUrl } },
    sandbox_b: {
      package: "modal",
      env: { SANDBOX_B_TOKEN_ID: modal.tokenId, SANDBOX_B_TOKEN_SECRET: KEY, SANDBOX_B_SERVER_URL: modal.url },
    },
    sandbox_c: { package: "@runloop/api-client", env: { SANDBOX_C_API_KEY: KEY, SANDBOX_C_API_URL: runloop.url } },
  };
}

function project(provider: string): string {
  const dir = mkdtempSync(join(tmpdir(), `agentcli-exe-${provider}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "skills", "hello", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "agent.toml"),
    `[agent]\nname = "exe-${provider}"\nmodel = "openai:gpt-test"\n\n[sandbox]\nprovider = "${provider}"\n`,
  );
  writeFileSync(join(dir, "AGENTS.md"), "You run commands in a sandbox.\n");
  writeFileSync(
    join(dir, "skills", "hello", "SKILL.md"),
    "---\nname: hello\ndescription: Greets.\n---\nRun scripts/hello.sh.\n",
  );
  writeFileSync(join(dir, "skills", "hello", "scripts", "hello.sh"), 'echo "hello from the skill, $1"\n');
  return dir;
}

/** Everything the executables printed (the keys must never be in it). */
let printed = "";

/** `dist/agentcli dev` on the project, once it says it serves; its URL. */
async function serve(dir: string, env: Record<string, string>): Promise<string> {
  const dev = await spawnServing({
    serving: SERVING.dev,
    start: (port) => {
      const proc = spawn(EXE, ["dev", "--config", join(dir, "agent.toml"), "--port", String(port)], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      proc.stdout!.on("data", (d: Buffer) => (out += d));
      proc.stderr!.on("data", (d: Buffer) => (out += d));
      proc.once("exit", () => (printed += out));
      return proc;
    },
  });
  cleanups.push(() => dev.stop());
  return dev.url;
}

test(
  "dist/agentcli runs the vendor sandboxes with the SDKs it contains (upload, execute, download) and names them in deploy --dry-run",
  { skip },
  async () => {
    const model = await startModelServer();
    cleanups.push(() => model.close());
    for (const [provider, v] of Object.entries(await vendors())) {
      const dir = project(provider);
      const dry = spawnSync(EXE, ["deploy", "--dry-run", "--json"], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", OPENAI_API_KEY: "k", ...v.env },
        encoding: "utf8",
      });
      assert.equal(dry.status, 0, dry.stderr);
      printed += dry.stdout + dry.stderr;
      assert.ok(JSON.parse(dry.stdout).requires.packages.includes(v.package), dry.stdout);

      const url = await serve(dir, { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.openaiBaseUrl, ...v.env });
      const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
      const thread = (await client.threads.create()).thread_id;
      model.script(
        {
          toolCalls: [{
            name: "write_file",
            args: { file_path: "/workspace/w.txt", content: `written by ${provider}\n` },
          }],
        },
        {
          toolCalls: [{
            name: "execute",
            args: { command: "cat /workspace/w.txt && bash /skills/hello/scripts/hello.sh exe" },
          }],
        },
        { toolCalls: [{ name: "read_file", args: { file_path: "/workspace/w.txt" } }] },
        { text: "done" },
      );
      const state =
        (await client.runs.wait(thread, "agent", { input: { messages: [{ role: "user", content: "go" }] } })) as {
          messages: Array<{ type: string; content: unknown }>;
        };
      const tools = state.messages.filter((m) => m.type === "tool").map((
        m,
      ) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
      assert.equal(tools.length, 3, JSON.stringify(tools));
      assert.match(tools[1]!, new RegExp(`written by ${provider}\\nhello from the skill, exe`));
      assert.match(tools[2]!, new RegExp(`written by ${provider}`));
      assert.ok(!JSON.stringify(state).includes(KEY), "the key is not in the thread");
    }
  },
);

test("the vendor keys never appear in what the executables printed", { skip }, async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  assert.ok(printed.length > 0);
  assert.ok(!printed.includes(KEY), "a key was printed");
});
