/**
 * The conformance suite every sandbox provider runs (local, platform, vendor plugins): it
 * registers `node:test` tests that host a real agent server (as `agentcli dev` does) whose
 * `[sandbox]` uses the provider, drive it with the LangGraph SDK, and script the model's tool
 * calls with an OpenAI-wire model server. Some checks also call the plugin's
 * `sandbox:create` directly (binary transfer, deletion at the provider).
 *
 * Plugin authors use it as `sandboxProviderConformance` of `agentcli/testing` (bin/testing.ts),
 * which passes the built-in plugins in (core never imports plugins/). The servers and turns the
 * cases drive: ./sandbox-conformance-kit.ts; the cases: ./sandbox-conformance-cases.ts and
 * ./sandbox-limits-conformance.ts.
 *
 * @example
 * // tests/sandbox/my-box.test.ts, run with: node --test tests/sandbox/my-box.test.ts
 * import { sandboxProviderConformance } from "agentcli/testing";
 * import myBox from "../../src/plugin.ts";
 * sandboxProviderConformance({ plugin: myBox, env: { MY_BOX_KEY: process.env.MY_BOX_KEY! }, workdir: "/home/user" });
 */
import { after, before, describe } from "node:test";
import { rmSync } from "node:fs";
import { type Plugin, silentLog } from "../kernel/index.ts";
import { startModelServer } from "./model-server/server.ts";
import { limitCases } from "./sandbox-limits-conformance.ts";
import { ConformanceKit } from "./sandbox-conformance-kit.ts";
import { isolationCases, lifecycleCases, toolCases } from "./sandbox-conformance-cases.ts";

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

/** Registers the suite (call it at the top level of a test file). */
export function sandboxConformance(opts: SandboxConformanceOptions): void {
  const kit = new ConformanceKit(opts);
  describe(`sandbox conformance: ${opts.name}`, () => {
    if (opts.limits ?? opts.runtime === "local") {
      limitCases({
        workdir: kit.wd,
        start: async (env, warn) => {
          const s = await kit.start("thread", { env, log: { ...silentLog, warn } });
          return {
            threadId: () => kit.newThread(s),
            turn: (threadId, calls) => kit.turn(s, threadId, calls),
            stop: () => s.stop(),
          };
        },
      });
    }

    before(async () => {
      kit.model = await (opts.startModelServer ?? startModelServer)();
      kit.main = await kit.start("thread");
      kit.threadA = await kit.newThread(kit.main);
    });
    after(async () => {
      for (const s of [...kit.servers].reverse()) await s.stop().catch(() => {});
      await kit.model?.close();
      rmSync(kit.root, { recursive: true, force: true });
    });

    toolCases(kit);
    isolationCases(kit);
    lifecycleCases(kit);
  });
}
