/**
 * The errors auth raises, and how they go over HTTP: status, a `{"detail": "..."}` body and,
 * for bearer-token providers, a `WWW-Authenticate: Bearer` challenge (RFC 6750).
 * Messages never contain a token or a key.
 *
 * @example
 * try { user = await authenticate(req); }
 * catch (err) { if (isAuthError(err)) return authErrorResponse(err); throw err; }
 */
import { AgentcliError, userError } from "../kernel/index.ts";

const challenges = new WeakMap<AgentcliError, string>();

/** A 401: the request carries no credentials, or ones that do not hold. */
export function unauthorized(
  message: string,
  opts: { hint?: string; bearer?: boolean; error?: "invalid_token" | "invalid_request" } = {},
): AgentcliError {
  const err = userError("UNAUTHORIZED", {
    message,
    hint: opts.hint ??
      (opts.bearer
        ? "Send 'Authorization: Bearer <access token>' with a valid session token of the identity provider."
        : undefined),
    status: 401,
  });
  if (opts.bearer) {
    const challenge = opts.error
      ? `Bearer realm="agentcli", error="${opts.error}", error_description="${message.replace(/["\\]/g, "'")}"`
      : `Bearer realm="agentcli"`;
    challenges.set(err, challenge);
  }
  return err;
}

/** A 403: the caller is known but may not do this. */
export function forbidden(message: string, opts: { hint?: string } = {}): AgentcliError {
  return userError("FORBIDDEN", { message, hint: opts.hint, status: 403 });
}

/** A 503: the identity provider cannot be reached, so no request is let through (fail closed). */
export function identityUnavailable(message: string, hint: string, cause?: unknown): AgentcliError {
  return userError("REMOTE_FAILED", { message, hint, status: 503, cause });
}

/** The `WWW-Authenticate` value for an auth error, when it has one. */
export function authChallenge(err: unknown): string | null {
  return err instanceof AgentcliError ? challenges.get(err) ?? null : null;
}

/** True for errors raised while authenticating that should be sent to the client as they are. */
export function isAuthError(err: unknown): err is AgentcliError {
  return err instanceof AgentcliError && (err.status === 401 || err.status === 403 || err.status === 503);
}

/** The HTTP response for an auth error: its status, `{"detail": message}`, the challenge header. */
export function authErrorResponse(err: AgentcliError): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const challenge = authChallenge(err);
  if (challenge) headers["www-authenticate"] = challenge;
  if (err.status === 503) headers["retry-after"] = "5";
  return new Response(JSON.stringify({ detail: err.message }), { status: err.status, headers });
}
