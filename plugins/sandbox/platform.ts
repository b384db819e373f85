/**
 * Sandbox provider `platform`: sandboxes of an agentcli control plane (`agentcli platform
 * serve`), through its LangSmith-compatible sandbox API with the `langsmith/sandbox` client.
 * A deployment uses the control plane it was deployed to (`AGENTCLI_PLATFORM_URL`,
 * `AGENTCLI_PLATFORM_SANDBOX_KEY`, set by the control plane); `agentcli dev` uses
 * `AGENTCLI_PLATFORM_URL` with `PLATFORM_API_KEY`. `image` is the sandbox's image.
 */
import {
  LangSmithCommandTimeoutError,
  LangSmithResourceNotFoundError,
  type Sandbox as RemoteBox,
  SandboxClient,
} from "langsmith/sandbox";
import {
  agentcliError,
  definePlugin,
  type ExecuteResult,
  PlatformSandboxKeyMissing,
  PlatformSandboxUrlMissing,
  type Sandbox,
  type SandboxCreateOptions,
  SandboxNotFoundError,
} from "../../core/index.ts";

const OUTPUT_LIMIT = 100 * 1024;

function connect(opts: SandboxCreateOptions): SandboxClient {
  const url = opts.env.AGENTCLI_PLATFORM_URL?.trim();
  const key = opts.env.AGENTCLI_PLATFORM_SANDBOX_KEY?.trim() || opts.env.PLATFORM_API_KEY?.trim();
  if (!url) {
    throw agentcliError(PlatformSandboxUrlMissing);
  }
  if (!key) throw agentcliError(PlatformSandboxKeyMissing);
  return new SandboxClient({ apiEndpoint: `${url.replace(/\/+$/, "")}/v2/sandboxes`, apiKey: key, maxRetries: 2 });
}

function wrap(box: RemoteBox, client: SandboxClient): Sandbox {
  // A command goes over a WebSocket, whose refused upgrade (404 for a sandbox deleted behind
  // our back) is a connection error, not a not-found: ask the API whether the sandbox is still there.
  const gone = async (err: unknown) => {
    if (err instanceof LangSmithResourceNotFoundError) {
      return /sandbox/i.test(err.message) ? new SandboxNotFoundError(box.name) : err;
    }
    try {
      await client.getSandbox(box.name);
    } catch (check) {
      if (check instanceof LangSmithResourceNotFoundError) return new SandboxNotFoundError(box.name);
    }
    return err;
  };
  return {
    id: box.name,
    async execute(command, { timeoutMs } = {}): Promise<ExecuteResult> {
      let out = "";
      const seconds = timeoutMs ? Math.max(1, Math.ceil(timeoutMs / 1000)) : 120;
      try {
        const r = await box.run(command, {
          timeout: seconds,
          onStdout: (d) => (out += d),
          onStderr: (d) => (out += d),
        });
        return { output: out.slice(0, OUTPUT_LIMIT), exitCode: r.exit_code, truncated: out.length > OUTPUT_LIMIT };
      } catch (err) {
        if (err instanceof LangSmithCommandTimeoutError) {
          return {
            output: out.slice(0, OUTPUT_LIMIT),
            exitCode: null,
            truncated: out.length > OUTPUT_LIMIT,
            timedOut: true,
          };
        }
        throw await gone(err);
      }
    },
    async uploadFiles(files) {
      const out = [];
      for (const f of files) {
        try {
          await box.write(f.path, f.content);
          out.push({ path: f.path, error: null });
        } catch {
          out.push({ path: f.path, error: "permission_denied" as const });
        }
      }
      return out;
    },
    async downloadFiles(paths) {
      const out = [];
      for (const path of paths) {
        try {
          out.push({ path, content: await box.read(path), error: null });
        } catch (err) {
          const msg = String((err as Error).message);
          out.push({
            path,
            content: null,
            error: /directory/.test(msg) ? "is_directory" as const : "file_not_found" as const,
          });
        }
      }
      return out;
    },
    async delete() {
      try {
        await client.deleteSandbox(box.name);
      } catch (err) {
        if (!(err instanceof LangSmithResourceNotFoundError)) throw err;
      }
    },
  };
}

export default definePlugin({
  name: "sandbox-platform",
  kind: "sandbox",
  description: "Sandboxes of the agentcli control plane (private beta).",
  sandbox: {
    provider: "platform",
    env: ["PLATFORM_API_KEY"],
    // A revision of the control plane gets its deployment's own key instead of the tenant's.
    envStandIns: ["AGENTCLI_PLATFORM_SANDBOX_KEY"],
    partnerPackage: "langsmith",
    defaultTemplate: "agentcli-default",
    capabilities: { persistentFiles: true, network: false, gpu: false },
    beta: true,
  },
  hooks: {
    "sandbox:create": async (opts) => {
      const client = connect(opts);
      if (opts.sandboxId) {
        try {
          return wrap(await client.getSandbox(opts.sandboxId), client);
        } catch (err) {
          if (err instanceof LangSmithResourceNotFoundError) throw new SandboxNotFoundError(opts.sandboxId);
          throw err;
        }
      }
      return wrap(await client.createSandbox({ name: `agentcli-${crypto.randomUUID().slice(0, 18)}` }), client);
    },
  },
});
