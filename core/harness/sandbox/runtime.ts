/**
 * `--sandbox <runtime>` of `dev` and `serve`: finds the sandbox-runtime plugin of that name
 * and checks it can run here (the local runtime needs `bwrap`), before the server starts.
 */
import {
  AgentcliError,
  agentcliError,
  type Env,
  type PluginDriver,
  SandboxRuntimeCannotRun,
  type SandboxRuntimeSpec,
  SandboxRuntimeUnknown,
} from "../../kernel/index.ts";
import { missingSandboxEnv } from "../../config/index.ts";

/** The runtime spec of `name`; a user error when unknown or unable to run on this machine. */
export async function selectSandboxRuntime(driver: PluginDriver, name: string, env: Env): Promise<SandboxRuntimeSpec> {
  const runtimes = driver.specs("sandbox-runtime");
  const spec = driver.spec("sandbox-runtime", name);
  if (!spec) {
    throw agentcliError(SandboxRuntimeUnknown, { runtime: name, runtimes: runtimes.map((r) => r.name) });
  }
  const problem = await spec.check?.({ env });
  // Not a usage error: the machine lacks something (exit 1, not 2).
  if (problem instanceof AgentcliError) throw problem;
  if (problem) {
    throw agentcliError(SandboxRuntimeCannotRun, { runtime: name, problem: problem.message, fix: problem.hint });
  }
  return spec;
}

/** Says, once at start, when the configured provider cannot work: its credentials are missing. */
export function sandboxCredentialWarning(driver: PluginDriver, provider: string, env: Env): string | null {
  if (provider === "none") return null;
  const spec = driver.spec("sandbox", provider);
  const missing = missingSandboxEnv(spec, env);
  if (!missing.length) return null;
  return `the sandbox provider "${provider}" needs ${missing.join(" and ")}, which ${
    missing.length > 1 ? "are" : "is"
  } not set: "execute" and the file tools will fail until you set ${
    missing.length > 1 ? "them" : "it"
  }, or run the sandboxes on this machine with --sandbox local`;
}
