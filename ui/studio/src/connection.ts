/**
 * Where the studio sends its Agent API calls: this page's own server by default, or another
 * base URL (a deployed agent, `langgraph-cli dev`) with an API key (`x-api-key`) or a bearer
 * token. Kept in this browser's local storage only.
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

/** The credential headers of a connection. */
export function authHeaders(c: Connection): Record<string, string> {
  const h: Record<string, string> = {};
  if (c.apiKey.trim()) h["x-api-key"] = c.apiKey.trim();
  if (c.token.trim()) h.authorization = `Bearer ${c.token.trim()}`;
  return h;
}

/** The SDK client of a connection. */
export function createClient(c: Connection): Client {
  return new Client({
    apiUrl: apiBase(c),
    apiKey: c.apiKey.trim() || null,
    defaultHeaders: c.token.trim() ? { authorization: `Bearer ${c.token.trim()}` } : {},
    callerOptions: { maxRetries: 0 },
  });
}

/** A plain GET of the Agent API (for endpoints the SDK has no method for): status and JSON body. */
export async function getJson(c: Connection, path: string, signal?: AbortSignal): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${apiBase(c)}${path}`, { headers: authHeaders(c), signal });
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
