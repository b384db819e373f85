/**
 * The local development bypass of `agentcli dev` (spec 5.1 rule 4: the development studio
 * bypasses auth). It is ON by default under `dev` and can be turned off with
 * `AGENTCLI_DEV_AUTH_BYPASS=0` to try the real provider locally. While on, a request that
 * carries no credentials at all (no `Authorization`, no `x-api-key`) is accepted as the
 * development user `dev-user`, or as the id given in `x-agentcli-dev-user: <id>` (to try two
 * users side by side). Requests that do carry credentials are still verified by the provider.
 * Under `serve` none of this exists: the variable and the header are ignored.
 *
 * @example
 * const line = devAuthBanner(config, env, "dev"); if (line) io.out(line);
 */
import type { AuthUser, Env } from "../kernel/index.ts";
import type { AgentConfig } from "../config/index.ts";
import { unauthorized } from "./auth-error.ts";

export const DEV_BYPASS_ENV = "AGENTCLI_DEV_AUTH_BYPASS";
export const DEV_USER_HEADER = "x-agentcli-dev-user";
export const DEFAULT_DEV_USER = "dev-user";

const DEV_USER_RE = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

/** True when the bypass applies: only in `dev`, unless switched off. */
export function devBypassEnabled(env: Env, mode: "dev" | "serve"): boolean {
  if (mode !== "dev") return false;
  const flag = env[DEV_BYPASS_ENV]?.trim().toLowerCase() ?? "";
  return !["0", "false", "no", "off"].includes(flag);
}

/** True when a request carries any credentials, so the provider must judge it. */
export function hasCredentials(request: Request): boolean {
  return request.headers.has("authorization") || request.headers.has("x-api-key");
}

/** The development user of a request without credentials. */
export function devBypassUser(request: Request): AuthUser {
  const asked = request.headers.get(DEV_USER_HEADER)?.trim();
  if (asked !== undefined && asked !== "" && !DEV_USER_RE.test(asked)) {
    throw unauthorized(
      `Cannot authenticate request: "${DEV_USER_HEADER}" must be 1-128 letters, digits or ._@+- characters`,
    );
  }
  const identity = asked || DEFAULT_DEV_USER;
  return { identity, isAuthenticated: true, displayName: `${identity} (development bypass)`, permissions: ["dev"] };
}

/** The line `agentcli dev` prints at start about auth, or null when there is nothing to say. */
export function devAuthBanner(
  config: AgentConfig,
  env: Env,
  mode: "dev" | "serve",
  identity: { public?: boolean } | null = null,
): string | null {
  const provider = config.auth?.provider ?? null;
  // A public provider needs no credentials: there is nothing to bypass.
  if (mode !== "dev" || identity?.public) return null;
  const posture = provider ?? "the platform API key (x-api-key)";
  if (!devBypassEnabled(env, mode)) {
    return `auth: ${posture} is enforced locally (${DEV_BYPASS_ENV}=0).`;
  }
  return `auth: development bypass ON: requests without credentials are accepted as user "${DEFAULT_DEV_USER}" ` +
    `(or the id in the "${DEV_USER_HEADER}" header); requests with credentials are still checked by ${posture}. ` +
    `Set ${DEV_BYPASS_ENV}=0 to enforce auth locally. "agentcli serve" never bypasses auth.`;
}
