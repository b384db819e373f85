/**
 * The conformance suite every sandbox provider runs (local, platform, vendor plugins): it
 * registers `node:test` tests that host a real agent server (as `agentcli dev` does) whose
 * `[sandbox]` uses the provider, drive it with the LangGraph SDK, and script the model's tool
 * calls with an OpenAI-wire model server. Some checks also call the plugin's
 * `sandbox:create` directly (binary transfer, deletion at the provider).
 *
 * Plugin authors use it as `sandboxProviderConformance` of `agentcli/testing` (bin/testing.ts),
 * which passes the built-in plugins in (core never imports plugins/).
 *
 * @example
 * // tests/sandbox/my-box.test.ts, run with: node --test tests/sandbox/my-box.test.ts
 * import { sandboxProviderConformance } from "agentcli/testing";
 * import myBox from "../../src/plugin.ts";
 * sandboxProviderConformance({ plugin: myBox, env: { MY_BOX_KEY: process.env.MY_BOX_KEY! }, workdir: "/home/user" });
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { loadProject } from "../config/index.ts";
import { buildBundle, readBundle } from "../bundle/index.ts";
import { type Host, hostBundle } from "../server/index.ts";
import {
  isSandboxNotFound,
  type Plugin,
  PluginDriver,
  type Sandbox,
  type SandboxScope,
  type ServerLog,
  silentLog,
} from "../kernel/index.ts";
import { startModelServer } from "./model-server/server.ts";
import { limitCases } from "./sandbox-limits-conformance.ts";

/** What the suite needs of a scripted model server (./model-server/server.ts, the default, is one). */
export interface ScriptedModelServer {
  openaiBaseUrl: string;
  script(
    ...replies: Array<{ text?: string; toolCalls?: Array<{ name: string; args: Record<string, unknown> }> }>
  ): void;
  close(): Promise<void>;
}

export interface SandboxConformanceOptions {
  /** Label of the suite. */
  name: string;
  /** `[sandbox].provider` of the test agent. */
  provider: string;
  /** The plugins of the agentcli under test (core never imports plugins/: pass `builtinPlugins` of plugins/registry.ts). */
  builtins: readonly Plugin[];
  /** Plugins besides the built-in ones (your provider's plugin). */
  plugins?: Plugin[];
  /** `--sandbox <runtime>` (e.g. "local"); absent: the provider's own plugin runs the sandboxes. */
  runtime?: string;
  /** The server's environment: your provider's credentials. */
  env?: Record<string, string>;
  /** The scripted OpenAI-wire model the test agent talks to (default: ./model-server/server.ts). */
  startModelServer?: () => Promise<ScriptedModelServer>;
  /** A writable directory inside the sandbox (default: the runtime's or provider's `workdir`, else "/tmp"). */
  workdir?: string;
  /** Whether commands may reach the network (default false: the suite checks they cannot). */
  network?: boolean;
  /** Also check the sandbox cannot see this machine's data dir and project (default: when `runtime` is "local"). */
  hostIsolation?: boolean;
  /**
   * Also check the limits of ./sandbox-limits-conformance.ts (memory, processes, CPU, /tmp,
   * workspace; needs python3 in the sandbox). Default: when `runtime` is "local".
   */
  limits?: boolean;
}

const CANARY = "AGENTCLI_CONFORMANCE_CANARY";

interface Server {
  host: Host;
  client: Client;
  dataDir: string;
  stop(): Promise<void>;
}

/** Registers the suite (call it at the top level of a test file). */
export function sandboxConformance(opts: SandboxConformanceOptions): void {
  const plugins = [...opts.builtins, ...(opts.plugins ?? [])];
  const driver = new PluginDriver(plugins);
  const runtimeSpec = opts.runtime ? driver.spec("sandbox-runtime", opts.runtime) : undefined;
  const providerSpec = driver.spec("sandbox", opts.provider);
  const wd = opts.workdir ?? runtimeSpec?.workdir ?? providerSpec?.workdir ?? "/tmp";
  const hostIsolation = opts.hostIsolation ?? opts.runtime === "local";
  const canary = `canary-${crypto.randomUUID()}`;
  const root = mkdtempSync(join(tmpdir(), "agentcli-sandbox-conformance-"));
  // A server running as root runs local sandboxes as "nobody", who must be able to enter it.
  chmodSync(root, 0o711);
  let model: ScriptedModelServer;
  const servers: Server[] = [];

  const project = (scope: SandboxScope) => {
    const dir = join(root, `project-${scope}`);
    mkdirSync(join(dir, "skills", "hello", "scripts"), { recursive: true });
    writeFileSync(
      join(dir, "agent.toml"),
      `[agent]\nname = "conformance-${scope}"\nmodel = "openai:gpt-test"\n\n[sandbox]\nprovider = "${opts.provider}"\nscope = "${scope}"\n`,
    );
    writeFileSync(join(dir, "AGENTS.md"), "You run commands in a sandbox.\n");
    writeFileSync(
      join(dir, "skills", "hello", "SKILL.md"),
      "---\nname: hello\ndescription: Greets from a script.\n---\nRun scripts/hello.sh.\n",
    );
    writeFileSync(join(dir, "skills", "hello", "scripts", "hello.sh"), 'echo "hello from the skill, $1"\n');
    writeFileSync(join(dir, ".env"), `${CANARY}=${canary}\n`);
    return dir;
  };

  const start = async (
    scope: SandboxScope,
    dataDir = join(root, `data-${scope}-${servers.length}`),
    extra: { env?: Record<string, string>; log?: ServerLog } = {},
  ): Promise<Server> => {
    const dir = project(scope);
    const env = {
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: model.openaiBaseUrl,
      ...opts.env,
      ...extra.env,
      [CANARY]: canary,
      AGENTCLI_SANDBOX_IDLE_SECONDS: "0",
    };
    const loaded = await loadProject(join(dir, "agent.toml"), { driver, env, requireEnv: false, cwd: dir });
    const bundle = await readBundle((await buildBundle(loaded, { driver, version: "conformance" })).bytes);
    const host = await hostBundle({
      bundle,
      driver,
      env: loaded.env,
      mode: "dev",
      dataDir,
      port: 0,
      host: "127.0.0.1",
      log: extra.log ?? silentLog,
      sandboxRuntime: opts.runtime ?? null,
      sandboxDir: `${dataDir}-sandboxes`,
      privatePaths: [dir],
    });
    const server: Server = {
      host,
      dataDir,
      client: new Client({ apiUrl: `http://127.0.0.1:${host.listening.port}`, callerOptions: { maxRetries: 0 } }),
      stop: async () => {
        servers.splice(servers.indexOf(server), 1);
        await host.close();
      },
    };
    servers.push(server);
    return server;
  };

  /** One run: the model makes these tool calls one after another, then answers; returns the tool results. */
  const turn = async (
    s: Server,
    threadId: string,
    calls: Array<{ name: string; args: Record<string, unknown> }>,
  ): Promise<string[]> => {
    model.script(...calls.map((c) => ({ toolCalls: [c] })), { text: "done" });
    const state =
      (await s.client.runs.wait(threadId, "agent", { input: { messages: [{ role: "user", content: "go" }] } })) as {
        messages?: Array<{ type: string; content: unknown }>;
      };
    const messages = state.messages ?? [];
    const lastHuman = messages.map((m) => m.type).lastIndexOf("human");
    const tools = messages.slice(lastHuman + 1).filter((m) => m.type === "tool").map((
      m,
    ) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    assert.equal(tools.length, calls.length, `expected ${calls.length} tool results, got ${JSON.stringify(tools)}`);
    return tools;
  };
  const exec = (command: string, timeout?: number) => ({
    name: "execute",
    args: { command, ...(timeout ? { timeout } : {}) },
  });
  const newThread = async (s: Server) => (await s.client.threads.create()).thread_id;
  const sandboxRow = async (s: Server, key: string) => await s.host.server.storage.sandboxes.list(key);
  const attach = async (s: Server, key: string, sandboxId: string): Promise<Sandbox> => {
    const sandbox = await driver.runProvider(
      "sandbox:create",
      opts.runtime ? "sandbox-runtime" : "sandbox",
      opts.runtime ?? opts.provider,
      {
        provider: opts.provider,
        key,
        scope: "thread",
        template: "t",
        image: "python:3",
        env: { ...opts.env },
        sandboxId,
        host: { stateDir: `${s.dataDir}-sandboxes`, hiddenPaths: [] },
      },
    );
    assert.ok(sandbox, "the plugin answered sandbox:create");
    return sandbox;
  };

  describe(`sandbox conformance: ${opts.name}`, () => {
    let main: Server;
    let threadA: string;

    if (opts.limits ?? opts.runtime === "local") {
      limitCases({
        workdir: wd,
        start: async (env, warn) => {
          const s = await start("thread", undefined, { env, log: { ...silentLog, warn } });
          return {
            threadId: () => newThread(s),
            turn: (threadId, calls) => turn(s, threadId, calls),
            stop: () => s.stop(),
          };
        },
      });
    }

    before(async () => {
      model = await (opts.startModelServer ?? startModelServer)();
      main = await start("thread");
      threadA = await newThread(main);
    });
    after(async () => {
      for (const s of [...servers].reverse()) await s.stop().catch(() => {});
      await model?.close();
      rmSync(root, { recursive: true, force: true });
    });

    test("execute: output and exit codes; a failing command is a result, not an error", async () => {
      const [ok, failed] = await turn(main, threadA, [exec("echo hello sandbox"), exec("echo oops >&2; exit 3")]);
      assert.match(ok, /hello sandbox/);
      assert.match(ok, /\[Command succeeded with exit code 0\]/);
      assert.match(failed, /oops/);
      assert.match(failed, /\[Command failed with exit code 3\]/);
    });

    test("file tools and execute act on the same sandbox filesystem", async () => {
      const file = `${wd}/notes.txt`;
      // At most four tool calls a turn: each one is several graph steps (recursion limit 25).
      const [written, catted, read, edited] = await turn(main, threadA, [
        { name: "write_file", args: { file_path: file, content: "first line\n" } },
        exec(`cat ${file} && echo "second line" >> ${file}`),
        { name: "read_file", args: { file_path: file } },
        { name: "edit_file", args: { file_path: file, old_string: "first", new_string: "1st" } },
      ]);
      const [after, listed, found, grepped] = await turn(main, threadA, [
        exec(`cat ${file}`),
        { name: "ls", args: { path: wd } },
        { name: "glob", args: { pattern: "*.txt", path: wd } },
        { name: "grep", args: { pattern: "second", path: wd } },
      ]);
      assert.match(written, /notes\.txt/);
      assert.match(catted, /first line/);
      assert.match(read, /first line[\s\S]*second line/);
      assert.match(edited, /notes\.txt/);
      assert.match(after, /1st line\nsecond line/);
      assert.match(listed, /notes\.txt/);
      assert.match(found, /notes\.txt/);
      assert.match(grepped, /notes\.txt/);
    });

    test("bad input: a path that does not exist is a clear tool result and the run goes on", async () => {
      const [read, catted] = await turn(main, threadA, [
        { name: "read_file", args: { file_path: `${wd}/no/such/file.txt` } },
        exec(`cat ${wd}/no/such/file.txt`),
      ]);
      assert.match(read, /not found|No such file/i);
      assert.match(catted, /No such file/);
      assert.match(catted, /exit code [1-9]/);
    });

    test("binary upload and download through the contract", async () => {
      const [row] = await sandboxRow(main, `thread:${threadA}`);
      const sandbox = await attach(main, `thread:${threadA}`, row!.sandbox_id);
      const bytes = new Uint8Array(256).map((_, i) => i);
      const up = await sandbox.uploadFiles([{ path: `${wd}/bin/all-bytes.bin`, content: bytes }]);
      assert.deepEqual(up, [{ path: `${wd}/bin/all-bytes.bin`, error: null }]);
      const size = await sandbox.execute(`wc -c < ${wd}/bin/all-bytes.bin`);
      assert.equal(size.output.trim(), "256");
      const [down, missing] = await sandbox.downloadFiles([`${wd}/bin/all-bytes.bin`, `${wd}/bin/missing.bin`]);
      assert.deepEqual([...down!.content!], [...bytes]);
      assert.equal(down!.error, null);
      assert.equal(missing!.content, null);
      assert.equal(missing!.error, "file_not_found");
      await sandbox.close?.();
    });

    test("skills are in the sandbox: a skill's script runs with execute", async () => {
      const [out] = await turn(main, threadA, [exec("bash /skills/hello/scripts/hello.sh world")]);
      assert.match(out, /hello from the skill, world/);
    });

    test("thread scope: files persist across turns and are separate between threads", async () => {
      await turn(main, threadA, [exec(`echo kept > ${wd}/turns.txt`)]);
      const [again] = await turn(main, threadA, [exec(`cat ${wd}/turns.txt`)]);
      assert.match(again, /kept/);
      const threadB = await newThread(main);
      const [other] = await turn(main, threadB, [exec(`cat ${wd}/turns.txt`)]);
      assert.match(other, /No such file/);
      const [a] = await sandboxRow(main, `thread:${threadA}`);
      const [b] = await sandboxRow(main, `thread:${threadB}`);
      assert.notEqual(a!.sandbox_id, b!.sandbox_id);
    });

    test("timeout: a hung command is killed at its timeout and the run goes on", async () => {
      const started = Date.now();
      const [hung, next] = await turn(main, threadA, [exec("sleep 600", 2), exec("echo still here")]);
      assert.match(hung, /\[Command timed out after 2 s and was killed/);
      assert.match(next, /still here/);
      assert.ok(Date.now() - started < 300_000, "the hung command did not hold the run");
    });

    test("isolation: no server environment, no other sandbox" + (opts.network ? "" : ", no network"), async () => {
      const threadB = await newThread(main);
      await turn(main, threadB, [exec(`echo secret-of-b > ${wd}/b-only.txt`)]);
      const port = main.host.listening.port;
      const [env, procs, net, others] = await turn(main, threadA, [
        exec(`env; echo "canary:\${${CANARY}:-absent}"`),
        exec(`cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${canary} || true`),
        exec(`timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' && echo connected || echo refused`),
        exec(`cat ${wd}/b-only.txt; find / -name b-only.txt 2>/dev/null | head -3; echo end`),
      ]);
      assert.match(env, /canary:absent/);
      assert.doesNotMatch(env, new RegExp(canary));
      assert.doesNotMatch(env, /OPENAI_API_KEY/);
      assert.match(procs, /^0\b/m);
      if (!opts.network) assert.match(net, /refused/);
      assert.doesNotMatch(others, /secret-of-b/);
      assert.doesNotMatch(others, /b-only\.txt\n/);
    });

    if (hostIsolation) {
      test("isolation from this machine: the data dir, the project and its .env are invisible", async () => {
        const projectDir = join(root, "project-thread");
        const [out] = await turn(main, threadA, [
          exec(
            `ls ${main.dataDir} 2>&1; cat ${projectDir}/.env 2>&1; ls ${main.dataDir}-sandboxes 2>&1; ls ${root} 2>&1; echo end`,
          ),
        ]);
        assert.doesNotMatch(out, new RegExp(canary));
        assert.doesNotMatch(out, /PG_VERSION|local-[0-9a-f]{8}/);
        assert.match(out, /No such file or directory/);
      });
    }

    test("persistence across a server restart: the thread gets the same sandbox back", async () => {
      const [before] = await sandboxRow(main, `thread:${threadA}`);
      const dataDir = main.dataDir;
      await main.stop();
      main = await start("thread", dataDir);
      const [out] = await turn(main, threadA, [exec(`cat ${wd}/turns.txt`)]);
      assert.match(out, /kept/);
      const [afterRestart] = await sandboxRow(main, `thread:${threadA}`);
      assert.equal(afterRestart!.sandbox_id, before!.sandbox_id);
    });

    test("a sandbox that vanished at the provider: recreated, and the result says its files are gone", async () => {
      const threadV = await newThread(main);
      await turn(main, threadV, [exec(`echo soon-gone > ${wd}/v.txt`)]);
      const [row] = await sandboxRow(main, `thread:${threadV}`);
      await (await attach(main, `thread:${threadV}`, row!.sandbox_id)).delete();
      const [out] = await turn(main, threadV, [exec(`cat ${wd}/v.txt; echo new-sandbox`)]);
      assert.match(out, /no longer existed[\s\S]*files written to the old sandbox are gone/);
      assert.match(out, /new-sandbox/);
      const [now] = await sandboxRow(main, `thread:${threadV}`);
      assert.notEqual(now!.sandbox_id, row!.sandbox_id);
    });

    test("deleting a thread deletes its sandbox", async () => {
      const threadD = await newThread(main);
      await turn(main, threadD, [exec("echo x")]);
      const [row] = await sandboxRow(main, `thread:${threadD}`);
      await main.client.threads.delete(threadD);
      assert.deepEqual(await sandboxRow(main, `thread:${threadD}`), []);
      await assert.rejects(async () => {
        const s = await attach(main, `thread:${threadD}`, row!.sandbox_id);
        await s.execute("true");
      }, (err: unknown) => isSandboxNotFound(err));
    });

    test("assistant scope: one sandbox shared by the assistant's threads", async () => {
      const shared = await start("assistant");
      const [t1, t2] = [await newThread(shared), await newThread(shared)];
      await turn(shared, t1, [exec(`echo shared-file > ${wd}/shared.txt`)]);
      const [out] = await turn(shared, t2, [exec(`cat ${wd}/shared.txt`)]);
      assert.match(out, /shared-file/);
      const rows = await shared.host.server.storage.sandboxes.list();
      assert.equal(rows.length, 1);
      assert.match(rows[0]!.scope_key, /^assistant:/);
      await shared.stop();
    });
  });
}
