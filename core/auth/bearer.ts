/**
 * Reads `Authorization: Bearer <token>` from a request.
 *
 * @example
 * const token = bearerToken(request); // null when there is no Authorization header
 */
import { unauthorized } from "./auth-error.ts";

const TOKEN_RE = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The bearer token, or null when the header is absent; a 401 when the header is malformed. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header === null || header.trim() === "") return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header.trim());
  if (!match || !TOKEN_RE.test(match[1]!)) {
    throw unauthorized("Cannot authenticate request: the Authorization header is not 'Bearer <token>'", {
      bearer: true,
      error: "invalid_request",
    });
  }
  return match[1]!;
}

/** The 401 for a request without a bearer token. */
export function missingBearer(): Error {
  return unauthorized("Cannot authenticate request: no 'Authorization: Bearer <token>' header", { bearer: true });
}
