/**
 * What the cases of the sandbox conformance suite (./sandbox-conformance.ts) drive: test
 * projects whose `[sandbox]` uses the provider, agent servers hosting them (as `agentcli dev`
 * does), turns of scripted tool calls, and the provider's own `sandbox:create` for the checks
 * that go around the agent.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { loadProject } from "../config/index.ts";
import { buildBundle, readBundle } from "../bundle/index.ts";
import { type Host, hostBundle } from "../server/index.ts";
import { PluginDriver, type Sandbox, type SandboxScope, type ServerLog, silentLog } from "../kernel/index.ts";
import type { SandboxConformanceOptions, ScriptedModelServer } from "./sandbox-conformance.ts";

/** The environment variable of the test projects' `.env` whose value no sandbox may see. */
export const CANARY = "AGENTCLI_CONFORMANCE_CANARY";

/** An agent server of the suite, with an SDK client. */
export interface ConformanceServer {
  host: Host;
  client: Client;
  dataDir: string;
  stop(): Promise<void>;
}

/** A tool call the scripted model makes. */
export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
}

/** How {@link ConformanceKit.start} starts a server besides its scope. */
export interface StartOptions {
  /** Its data dir (default: a new one); the same one again is a restart. */
  dataDir?: string;
  env?: Record<string, string>;
  log?: ServerLog;
}

/** The suite's state and the means of its cases; `model`, `main` and `threadA` are set in the suite's `before`. */
export class ConformanceKit {
  readonly opts: SandboxConformanceOptions;
  readonly driver: PluginDriver;
  /** A writable directory inside the sandbox. */
  readonly wd: string;
  readonly hostIsolation: boolean;
  readonly canary = `canary-${crypto.randomUUID()}`;
  /** The suite's temporary directory: the projects and data dirs. */
  readonly root: string;
  readonly servers: ConformanceServer[] = [];
  model!: ScriptedModelServer;
  /** The thread-scope server most cases use (replaced by a restart). */
  main!: ConformanceServer;
  /** A thread of `main` whose sandbox the cases share. */
  threadA!: string;

  constructor(opts: SandboxConformanceOptions) {
    this.opts = opts;
    this.driver = new PluginDriver([...opts.builtins, ...(opts.plugins ?? [])]);
    const runtimeSpec = opts.runtime ? this.driver.spec("sandbox-runtime", opts.runtime) : undefined;
    const providerSpec = this.driver.spec("sandbox", opts.provider);
    this.wd = opts.workdir ?? runtimeSpec?.workdir ?? providerSpec?.workdir ?? "/tmp";
    this.hostIsolation = opts.hostIsolation ?? opts.runtime === "local";
    this.root = mkdtempSync(join(tmpdir(), "agentcli-sandbox-conformance-"));
    // A server running as root runs local sandboxes as "nobody", who must be able to enter it.
    chmodSync(this.root, 0o711);
  }

  /** Writes the test project of `scope` (an agent, a skill with a script, a `.env` with the canary). */
  project(scope: SandboxScope): string {
    const dir = join(this.root, `project-${scope}`);
    mkdirSync(join(dir, "skills", "hello", "scripts"), { recursive: true });
    writeFileSync(
      join(dir, "agent.toml"),
      `[agent]\nname = "conformance-${scope}"\nmodel = "openai:gpt-test"\n\n[sandbox]\nprovider = "${this.opts.provider}"\nscope = "${scope}"\n`,
    );
    writeFileSync(join(dir, "AGENTS.md"), "You run commands in a sandbox.\n");
    writeFileSync(
      join(dir, "skills", "hello", "SKILL.md"),
      "---\nname: hello\ndescription: Greets from a script.\n---\nRun scripts/hello.sh.\n",
    );
    writeFileSync(join(dir, "skills", "hello", "scripts", "hello.sh"), 'echo "hello from the skill, $1"\n');
    writeFileSync(join(dir, ".env"), `${CANARY}=${this.canary}\n`);
    return dir;
  }

  /** Builds the project of `scope` and hosts it on a free port. */
  async start(scope: SandboxScope, extra: StartOptions = {}): Promise<ConformanceServer> {
    const { opts, driver, servers } = this;
    const dataDir = extra.dataDir ?? join(this.root, `data-${scope}-${servers.length}`);
    const dir = this.project(scope);
    const env = {
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: this.model.openaiBaseUrl,
      ...opts.env,
      ...extra.env,
      [CANARY]: this.canary,
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
    const server: ConformanceServer = {
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
  }

  /** One run: the model makes these tool calls one after another, then answers; returns the tool results. */
  async turn(s: ConformanceServer, threadId: string, calls: ToolCall[]): Promise<string[]> {
    this.model.script(...calls.map((c) => ({ toolCalls: [c] })), { text: "done" });
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
  }

  async newThread(s: ConformanceServer): Promise<string> {
    return (await s.client.threads.create()).thread_id;
  }

  /** The sandbox manager's rows of a scope key (`thread:<id>`). */
  async sandboxRow(s: ConformanceServer, key: string) {
    return await s.host.server.storage.sandboxes.list(key);
  }

  /** The sandbox `sandboxId` of `key`, from the plugin itself (around the agent). */
  async attach(s: ConformanceServer, key: string, sandboxId: string): Promise<Sandbox> {
    const { opts } = this;
    const sandbox = await this.driver.runProvider(
      {
        hook: "sandbox:create",
        kind: opts.runtime ? "sandbox-runtime" : "sandbox",
        key: opts.runtime ?? opts.provider,
      },
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
  }
}

/** An `execute` tool call (`timeout` in seconds). */
export const exec = (command: string, timeout?: number): ToolCall => ({
  name: "execute",
  args: { command, ...(timeout ? { timeout } : {}) },
});
