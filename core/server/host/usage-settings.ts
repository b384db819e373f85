/**
 * Usage settings of a hosted bundle: recording on unless `AGENTCLI_USAGE=off`; the budgets and
 * rate limits from the variables, under the defaults of an `anonymous` deployment (a public
 * identity provider, `serve`; `dev` has none unless set); the prices from the model plugins'
 * tables and `AGENTCLI_MODEL_PRICES(_FILE)`. A malformed variable is a user error naming it.
 */
import { agentcliError, type Env, EnvNotTrueFalse, type PluginDriver } from "../../kernel/index.ts";
import type { Bundle } from "../../bundle/index.ts";
import type { AgentServerOptions } from "../app.ts";

/** The server's `usage` option for a bundle. */
export async function usageSettings(
  opts: { env: Env; driver: PluginDriver; bundle: Bundle; mode: "dev" | "serve" },
): Promise<AgentServerOptions["usage"]> {
  const raw = opts.env.AGENTCLI_USAGE?.trim().toLowerCase();
  if (raw === "off" || raw === "false" || raw === "0") return false;
  if (raw && !["on", "true", "1"].includes(raw)) {
    throw agentcliError(EnvNotTrueFalse, {
      name: "AGENTCLI_USAGE",
      value: opts.env.AGENTCLI_USAGE!,
      fix: "Set it to on (the default: usage recorded, budgets enforced) or off (nothing recorded, no budgets).",
    });
  }
  const { pricesFromEnv, usageLimitsFromEnv } = await import("../../engine/index.ts");
  const provider = opts.bundle.config.auth?.provider;
  const anonymous = opts.mode === "serve" && provider !== undefined &&
    opts.driver.spec("identity", provider)?.public === true;
  return {
    limits: usageLimitsFromEnv(opts.env, { anonymous }),
    prices: pricesFromEnv(opts.env, opts.driver),
    ownerKey: opts.env.PLATFORM_API_KEY?.trim() || null,
    addressHeader: opts.env.AGENTCLI_CLIENT_ADDRESS_HEADER?.trim() || null,
  };
}
