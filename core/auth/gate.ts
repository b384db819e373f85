/**
 * The release gates' credential (issue 37). Before a revision takes traffic the control plane
 * runs a smoke run and eval cases against it through the Agent API; under an identity provider
 * no user can be signed in from there. So the control plane mints a random token for each gated
 * revision, gives it to that revision only (`AGENTCLI_GATE_TOKEN` in its environment, never
 * stored, never logged) and sends it as `x-agentcli-gate`. The revision accepts it as a signed-in
 * user of its own, `agentcli-gate:<user>` (`x-agentcli-gate-user`, default `eval`), who owns only
 * what the gates create, like any other user, and sees no one else's threads or memory.
 *
 * Only per-user providers (identity providers) look at it: under the platform key or
 * `anonymous` the header is ignored and the gates call as real clients do (`x-api-key`, or
 * nothing), so they check what users get. Under a per-user provider a request carrying the
 * header is refused (401) unless it holds: under `dev`, without the variable, with a token
 * shorter than 32 characters, or with another value.
 *
 * @example
 * const user = await gateUser(request, { env, mode: "serve" }); // null: not a gate request
 */
import type { AuthUser, Env } from "../kernel/index.ts";
import { unauthorized } from "./auth-error.ts";
import { constantTimeEqual } from "./constant-time.ts";

export const GATE_TOKEN_ENV = "AGENTCLI_GATE_TOKEN";
export const GATE_HEADER = "x-agentcli-gate";
export const GATE_USER_HEADER = "x-agentcli-gate-user";
/** The prefix of the gate's users' identities. */
export const GATE_IDENTITY_PREFIX = "agentcli-gate:";

const MIN_TOKEN_LENGTH = 32;
const GATE_USER_RE = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

/** The gate's user of a request carrying `x-agentcli-gate`; null when it carries none; throws 401 when it does not hold. */
export async function gateUser(request: Request, opts: { env: Env; mode: "dev" | "serve" }): Promise<AuthUser | null> {
  const given = request.headers.get(GATE_HEADER);
  if (given === null) return null;
  const expected = opts.mode === "serve" ? opts.env[GATE_TOKEN_ENV]?.trim() ?? "" : "";
  const held = expected.length >= MIN_TOKEN_LENGTH && (await constantTimeEqual(given.trim(), expected));
  if (!held) {
    throw unauthorized(`Cannot authenticate request: "${GATE_HEADER}" is not this revision's gate credential`, {
      hint:
        "Only the control plane's release gates send this header; other clients sign in with the identity provider.",
    });
  }
  const asked = request.headers.get(GATE_USER_HEADER)?.trim() || "eval";
  if (!GATE_USER_RE.test(asked)) {
    throw unauthorized(
      `Cannot authenticate request: "${GATE_USER_HEADER}" must be 1-128 letters, digits or ._@+- characters`,
    );
  }
  const identity = `${GATE_IDENTITY_PREFIX}${asked}`;
  return { identity, isAuthenticated: true, displayName: `${identity} (release gate)`, permissions: [] };
}
