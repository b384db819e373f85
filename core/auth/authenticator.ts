/**
 * The request authenticator of a deployed agent. It picks the identity plugin of the
 * configured `[auth].provider` (the platform default `platform_key` when there is no
 * `[auth]`), runs its `auth:authenticate` hook for every non-public request, and fails closed:
 * no answer, a thrown error or an empty identity all refuse the request.
 *
 * @example
 * const authenticate = createAuthenticator({ driver, config, env, mode: "serve" });
 * const user = await authenticate(request); // null on public paths; throws a 401/503 AgentcliError
 */
import {
  agentcliError,
  AuthCredentialsMissing,
  AuthDefaultProviderMissing,
  AuthHookMissing,
  AuthProviderUnknown,
  type AuthUser,
  type Env,
  type Plugin,
  type PluginDriver,
} from "../kernel/index.ts";
import type { AgentConfig } from "../config/index.ts";
import { unauthorized } from "./auth-error.ts";
import { isPublicPath } from "./public-paths.ts";
import { devBypassEnabled, devBypassUser, hasCredentials } from "./dev-bypass.ts";
import { gateUser } from "./gate.ts";

/** The provider name of the no-`[auth]` posture: `x-api-key` must equal `PLATFORM_API_KEY`. */
export const PLATFORM_DEFAULT_PROVIDER = "platform_key";

export interface AuthenticatorOptions {
  driver: PluginDriver;
  config: AgentConfig;
  env: Env;
  mode: "dev" | "serve";
}

/** Authenticates one request: the user, null on a public path; throws a 401/503 user error to refuse. */
export type Authenticate = (request: Request) => Promise<AuthUser | null>;

type IdentityPlugin = Extract<Plugin, { kind: "identity" }>;

/** Finds the identity plugin serving `provider` (null: the platform default). */
export function identityPluginFor(driver: PluginDriver, provider: string | null): IdentityPlugin {
  const wanted = provider ?? PLATFORM_DEFAULT_PROVIDER;
  const plugin = driver.provider("identity", wanted) as IdentityPlugin | undefined;
  if (!plugin) {
    const known = driver.specs("identity").map((s) => s.provider);
    throw provider === null
      ? agentcliError(AuthDefaultProviderMissing, { provider: PLATFORM_DEFAULT_PROVIDER })
      : agentcliError(AuthProviderUnknown, { provider, known });
  }
  if (!plugin.hooks?.["auth:authenticate"]) {
    throw agentcliError(AuthHookMissing, { plugin: plugin.name });
  }
  return plugin;
}

/** Builds the authenticator; throws at once when the provider or its credentials are missing. */
export function createAuthenticator(opts: AuthenticatorOptions): Authenticate {
  const { driver, env, mode } = opts;
  const provider = opts.config.auth?.provider ?? null;
  const plugin = identityPluginFor(driver, provider);
  // The bypass stands in for credentials; a posture that needs none (anonymous) keeps its own behavior.
  const needsCredentials = plugin.identity.perUser || provider === null;
  const bypass = needsCredentials && devBypassEnabled(env, mode);
  const missing = plugin.identity.env.filter((name) => !env[name]?.trim());
  if (missing.length > 0 && !bypass) {
    throw agentcliError(AuthCredentialsMissing, { provider: plugin.identity.provider, names: missing });
  }
  const bearer = plugin.identity.signIn !== "none";
  return async (request) => {
    if (isPublicPath(new URL(request.url).pathname)) return null;
    // The release gates' own user (./gate.ts): per-user providers only, whose users cannot be signed in by the gates.
    const gate = plugin.identity.perUser ? await gateUser(request, { env, mode }) : null;
    if (gate) return gate;
    if (bypass && !hasCredentials(request)) return devBypassUser(request);
    const user = await driver.runProvider({
      hook: "auth:authenticate",
      kind: "identity",
      key: plugin.identity.provider,
    }, {
      request,
      provider,
      env,
      dev: mode === "dev",
    });
    if (!user) {
      throw unauthorized(`Cannot authenticate request: ${plugin.identity.provider} did not accept it`, { bearer });
    }
    if (typeof user.identity !== "string" || user.identity.trim() === "") {
      throw unauthorized(`Cannot authenticate request: ${plugin.identity.provider} returned no user identity`, {
        bearer,
      });
    }
    return plugin.identity.perUser ? user : { ...user, shared: true };
  };
}
