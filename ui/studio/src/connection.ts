/**
 * Where the studio sends its Agent API calls: this page's own server by default (signed in with
 * the deployment's identity provider when it has one, see `signIn.ts`), or another base URL (a
 * deployed agent, `langgraph-cli dev`) with an API key (`x-api-key`) or a bearer token. Kept in
 * this browser's local storage only.
 */
import { Client } from "@langchain/langgraph-sdk";

export interface Connection {
  /** Base URL of the Agent API ("" = this page's origin). */
  url: string;
  /** `x-api-key` value, or "" for none. */
  apiKey: string;
  /** `Authorization: Bearer` token, or "" for none. */
  token: string;
}

/** The signed-in session of this server's identity provider: a fresh token per call; a 401 ends it. */
export interface SessionAuth {
  token(): Promise<string | null>;
  expire(message: string): void;
}

const EXPIRED = "Your session has expired. Sign in again to continue.";

const KEY = "agentcli.studio.connection";

export function loadConnection(): Connection {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? "null") as Partial<Connection> | null;
    if (saved) return { url: saved.url ?? "", apiKey: saved.apiKey ?? "", token: saved.token ?? "" };
  } catch { /* storage blocked or corrupt */ }
  return { url: "", apiKey: "", token: "" };
}

export function saveConnection(c: Connection): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(c));
  } catch { /* ignore */ }
}

/** The API base: the connection's URL without a trailing slash, or this page's origin. */
export function apiBase(c: Connection): string {
  return (c.url.trim() || location.origin).replace(/\/+$/, "");
}

/**
 * LangGraph Studio's mark (`x-auth-scheme: langsmith`), sent only to this page's own server when
 * no credential is given: under `agentcli dev` a LangGraph.js project's custom auth then takes
 * these calls as its Studio user, as `langgraph dev` does for LangGraph Studio (`serve` and
 * `auth.disable_studio_auth` ignore it). A pasted key or token, or a sign-in, is used as it is.
 */
function studioMark(c: Connection, session: SessionAuth | null): Record<string, string> {
  return !c.url.trim() && !session && !c.apiKey.trim() && !c.token.trim() ? { "x-auth-scheme": "langsmith" } : {};
}

/** The credential headers of a connection: the session's token, or the pasted key and token. */
export async function authHeaders(c: Connection, session: SessionAuth | null): Promise<Record<string, string>> {
  const h: Record<string, string> = studioMark(c, session);
  if (c.apiKey.trim()) h["x-api-key"] = c.apiKey.trim();
  const token = session ? await session.token() : c.token.trim();
  if (token) h.authorization = `Bearer ${token}`;
  return h;
}

/** `fetch` that hands a 401 of this server back to sign-in. */
function sessionFetch(session: SessionAuth | null): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (res.status === 401 && session) session.expire(EXPIRED);
    return res;
  };
}

/** The SDK client of a connection; `session` (this server's sign-in) supplies the bearer token. */
export function createClient(c: Connection, session: SessionAuth | null = null): Client {
  return new Client({
    apiUrl: apiBase(c),
    apiKey: c.apiKey.trim() || null,
    defaultHeaders: !session && c.token.trim()
      ? { authorization: `Bearer ${c.token.trim()}` }
      : studioMark(c, session),
    callerOptions: { maxRetries: 0, fetch: sessionFetch(session) },
    ...(session
      ? {
        async onRequest(_url: URL, init: RequestInit) {
          const token = await session.token();
          if (!token) return init;
          const headers = new Headers(init.headers);
          headers.set("authorization", `Bearer ${token}`);
          return { ...init, headers };
        },
      }
      : {}),
  });
}

/** A plain GET of the Agent API (for endpoints the SDK has no method for): status and JSON body. */
export async function getJson(
  c: Connection,
  path: string,
  opts: { session?: SessionAuth | null; signal?: AbortSignal } = {},
): Promise<{ status: number; body: unknown }> {
  const session = opts.session ?? null;
  const res = await sessionFetch(session)(`${apiBase(c)}${path}`, {
    headers: await authHeaders(c, session),
    signal: opts.signal,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch { /* not JSON */ }
  return { status: res.status, body };
}

/** The message of an SDK or fetch error, for display. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
