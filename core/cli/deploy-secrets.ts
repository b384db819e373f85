/**
 * Which secrets a deployment stores (issue 31, item 5): the `.env` values, except a deploy
 * target's own credential (the `platform` target's `PLATFORM_API_KEY`, the tenant's
 * control-plane key), which is shipped only when something in the project needs it at run
 * time, and then with the reason. `deploy --dry-run` lists exactly `names`; a real deploy ships
 * exactly `secrets`. Values are never printed.
 *
 * A target credential is needed by:
 * - the identity in effect: no `[auth]` section means the platform default (`platform_key`),
 *   whose agent checks each request's `x-api-key` against `PLATFORM_API_KEY` (SPEC 5.1);
 *   an `[auth]` provider needs it only if its plugin lists it in `env`;
 * - the `[sandbox]` provider, if its plugin lists it in `env`, unless the target gives the
 *   deployment that sandbox's access itself (`DeployTargetSpec.sandboxAccess`: the control
 *   plane gives each revision its own sandbox key).
 */
import { PLATFORM_DEFAULT_PROVIDER } from "../auth/index.ts";
import type { AgentConfig } from "../config/index.ts";
import type { DeployTargetSpec, Env, PluginDriver } from "../kernel/index.ts";

/** What the dry run says about one target credential: shipped or not, and why. */
export interface SecretNote {
  name: string;
  shipped: boolean;
  reason: string;
}

export interface SecretPlan {
  /** The names the deployment will store, sorted (a needed credential that is not set yet included). */
  names: string[];
  /** The values to ship (set ones only). */
  secrets: Array<{ name: string; value: string }>;
  /** One note per target credential that is shipped, or set in `.env` and kept out. */
  notes: SecretNote[];
}

/** Why the project needs `name` at run time, or null. */
function runtimeUse(name: string, config: AgentConfig, driver: PluginDriver, target: DeployTargetSpec): string | null {
  const provider = config.auth?.provider ?? PLATFORM_DEFAULT_PROVIDER;
  const identity = driver.spec("identity", provider);
  if (identity?.env.includes(name)) {
    return config.auth
      ? `[auth] provider "${provider}" needs it`
      : "no [auth] section: the deployed agent checks each request's x-api-key against it (the platform default; add an [auth] section to use other credentials)";
  }
  const sandbox = driver.spec("sandbox", config.sandbox.provider);
  if (sandbox?.env.includes(name) && !target.sandboxAccess?.providers.includes(sandbox.provider)) {
    return `[sandbox] provider "${sandbox.provider}" reaches its sandboxes with it`;
  }
  return null;
}

/**
 * The secrets of a deployment of `config` to `target`: `.env` values (`dotenv`) minus target
 * credentials nothing needs, plus needed ones taken from the environment (`env`).
 */
export function planSecrets(
  opts: {
    config: AgentConfig;
    driver: PluginDriver;
    target: DeployTargetSpec;
    dotenv: Record<string, string>;
    env: Env;
  },
): SecretPlan {
  const { config, driver, target } = opts;
  const values = new Map(Object.entries(opts.dotenv).filter(([, v]) => v !== ""));
  const notes: SecretNote[] = [];
  const names = new Set(values.keys());
  for (const name of target.env) {
    const use = runtimeUse(name, config, driver, target);
    if (use) {
      names.add(name);
      if (!values.has(name) && opts.env[name]) values.set(name, opts.env[name]!);
      notes.push({ name, shipped: true, reason: use });
      continue;
    }
    if (!values.has(name)) continue;
    names.delete(name);
    values.delete(name);
    const sandbox = target.sandboxAccess?.providers.includes(config.sandbox.provider)
      ? `; ${target.sandboxAccess.how}`
      : "";
    notes.push({
      name,
      shipped: false,
      reason: `kept out of the deployment: it is the deploy target's credential (${
        target.envReason ?? target.target
      }) and nothing in this project needs it at run time${sandbox}`,
    });
  }
  const sorted = [...names].sort();
  return {
    names: sorted,
    secrets: sorted.filter((n) => values.has(n)).map((name) => ({ name, value: values.get(name)! })),
    notes,
  };
}
