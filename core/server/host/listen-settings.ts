/**
 * What a listener is bounded by, from the environment: `AGENTCLI_MAX_CONNECTIONS`,
 * `AGENTCLI_MAX_CONNECTIONS_PER_CLIENT` and `AGENTCLI_ALLOWED_HOSTS`. `dev`, `serve` and
 * `agentcli platform serve` read them the same way; a bad value stops the start.
 *
 * @example
 * const settings = listenSettings(process.env, { mode: "serve", bind: "0.0.0.0" });
 * await listen(server, { port: 8000, host: "0.0.0.0", ...settings });
 */
import { countSetting } from "../../config/index.ts";
import { type AllowedHosts, allowedHostsFromEnv } from "./allowed-hosts.ts";
import { DEFAULT_MAX_CONNECTIONS_PER_CLIENT, MAX_CONNECTIONS_PER_CLIENT_VARIABLE } from "./client-connections.ts";

/** Connections served at once; more are refused (`AGENTCLI_MAX_CONNECTIONS`). */
export const DEFAULT_MAX_CONNECTIONS = 1000;

export interface ListenSettings {
  maxConnections: number;
  maxConnectionsPerClient: number;
  allowedHosts: AllowedHosts;
}

/** The listener's bounds for `mode` bound to `bind` (the `--host` value). */
export function listenSettings(
  env: Record<string, string | undefined>,
  opts: { mode: "dev" | "serve" | "platform"; bind: string },
): ListenSettings {
  return {
    maxConnections: countSetting(env, "AGENTCLI_MAX_CONNECTIONS", {
      default: DEFAULT_MAX_CONNECTIONS,
      meaning: "most connections to serve at once",
    }),
    maxConnectionsPerClient: countSetting(env, MAX_CONNECTIONS_PER_CLIENT_VARIABLE, {
      default: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
      meaning: "most connections one client address may hold at once",
      zero: "no bound",
    }),
    allowedHosts: allowedHostsFromEnv(env, opts),
  };
}
