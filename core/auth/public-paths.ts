/**
 * Paths of a deployed agent that never need credentials: health and metadata, the chat UI
 * and studio shells with their static assets (their API calls carry the user's token or key;
 * the studio is only mounted under `dev` or with `AGENTCLI_STUDIO=1`), the API reference
 * at `/docs` and `/favicon.ico` (static files too), and
 * `/.well-known/*` (e.g. the A2A agent card).
 *
 * @example
 * if (!isPublicPath(new URL(req.url).pathname)) user = await authenticate(req);
 */

const EXACT = new Set(["/ok", "/info", "/openapi.json", "/app", "/studio", "/docs", "/favicon.ico"]);
const PREFIXES = ["/app/", "/studio/", "/docs/", "/.well-known/"];

/** True when `pathname` (already URL-normalized, as `new URL(req.url).pathname` gives it) is public. */
export function isPublicPath(pathname: string): boolean {
  if (EXACT.has(pathname)) return true;
  // An encoded separator or dot segment could make a router see a different path than we do.
  if (/%2f|%5c|%2e/i.test(pathname) || pathname.includes("\\")) return false;
  return PREFIXES.some((p) => pathname.startsWith(p));
}
