/** The host's sandboxes: the runtime `--sandbox` names (or the provider's credential warning) and the manager. */
import { resolve } from "node:path";
import type { Bundle } from "../../bundle/index.ts";
import type { Storage } from "../../storage/index.ts";
import type { HostOptions } from "./agent-host.ts";

/** `--sandbox <runtime>`, when given (with its warnings); else a warning when the provider's credentials are missing. */
export async function sandboxRuntime(opts: HostOptions) {
  const runtime = opts.sandboxRuntime
    ? await (await import("../../harness/index.ts")).selectSandboxRuntime(
      opts.driver,
      opts.sandboxRuntime,
      opts.env,
    )
    : null;
  if (runtime) { for (const w of (await runtime.warnings?.({ env: opts.env })) ?? []) opts.log.warn(w); }
  if (!runtime) {
    const { sandboxCredentialWarning } = await import("../../harness/index.ts");
    const warning = sandboxCredentialWarning(opts.driver, opts.bundle.config.sandbox.provider, opts.env);
    if (warning && opts.mode === "serve") opts.log.warn(warning);
  }
  return runtime;
}

/** The sandboxes of the current bundle's [sandbox]; the mapping is in the server's database. */
export async function sandboxManager(
  o: { opts: HostOptions; storage: Storage; runtime: string | null; current: { bundle: Bundle } },
) {
  const { opts } = o;
  const { SandboxManager } = await import("../../harness/index.ts");
  const sandboxDir = opts.env.AGENTCLI_SANDBOX_DIR
    ? resolve(opts.env.AGENTCLI_SANDBOX_DIR)
    : (opts.sandboxDir ?? `${opts.dataDir}-sandboxes`);
  return new SandboxManager({
    records: o.storage.sandboxes,
    driver: opts.driver,
    env: opts.env,
    runtime: o.runtime,
    host: { stateDir: sandboxDir, hiddenPaths: [opts.dataDir, sandboxDir, ...(opts.privatePaths ?? [])] },
    settings: () => o.current.bundle.config.sandbox,
    log: opts.log,
  });
}
