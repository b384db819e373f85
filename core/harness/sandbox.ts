/**
 * The `execute` tool's backend: files stay in the thread's state, commands run in the
 * sandbox of `[sandbox]`, created through the `sandbox:create` hook (one per thread or one
 * per assistant, by `scope`) on the first command. When no plugin provides a runtime for
 * the configured provider, `execute` fails with a tool error naming the missing runtime.
 */
import { StateBackend, type ExecuteResponse } from "deepagents";
import type { AgentConfig } from "../config/schema.ts";
import type { Env, Sandbox } from "../hooks.ts";
import type { PluginDriver } from "../plugin-driver.ts";
import { userError } from "../errors.ts";
import { currentConfig } from "./memory-backend.ts";
import { assistantIdOf } from "./namespaces.ts";

export class SandboxStateBackend extends StateBackend {
  readonly id = "agentcli-sandbox";
  #sandbox: AgentConfig["sandbox"];
  #driver: PluginDriver;
  #env: Env;
  #defaultAssistantId: string;
  #open = new Map<string, Promise<Sandbox>>();

  constructor(opts: { sandbox: AgentConfig["sandbox"]; driver: PluginDriver; env: Env; defaultAssistantId: string }) {
    super();
    this.#sandbox = opts.sandbox;
    this.#driver = opts.driver;
    this.#env = opts.env;
    this.#defaultAssistantId = opts.defaultAssistantId;
  }

  async execute(command: string): Promise<ExecuteResponse> {
    const sandbox = await this.#get();
    const result = await sandbox.execute(command);
    return { output: result.output, exitCode: result.exitCode, truncated: result.truncated ?? false };
  }

  /** Closes every sandbox this backend opened. */
  async close(): Promise<void> {
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.allSettled(all.map(async (p) => (await p).close?.()));
  }

  #get(): Promise<Sandbox> {
    const config = currentConfig();
    const { provider, scope, template, image } = this.#sandbox;
    const threadId = (config?.configurable as Record<string, unknown> | undefined)?.thread_id;
    const key = scope === "assistant"
      ? `assistant:${assistantIdOf(config, this.#defaultAssistantId)}`
      : `thread:${typeof threadId === "string" ? threadId : "none"}`;
    let p = this.#open.get(key);
    if (!p) {
      p = (async () => {
        const sandbox = await this.#driver.runFirst("sandbox:create", { provider, key, scope, template, image, env: this.#env });
        if (!sandbox) {
          throw userError("PLUGIN_FAILED", {
            message: `Cannot run "execute": no runtime for sandbox provider "${provider}" is installed (no plugin answered "sandbox:create")`,
            hint: `Load a plugin that provides the "${provider}" sandbox runtime with --plugin, or set [sandbox].provider = "none".`,
          });
        }
        return sandbox;
      })();
      p.catch(() => this.#open.delete(key));
      this.#open.set(key, p);
    }
    return p;
  }
}
