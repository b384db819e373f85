/**
 * The request's client, for usage limits: its address (the socket's, as the Node adapter or
 * Deno gives it; IPv6 counted per /64) and the chat UI's per-browser cookie
 * (`agentcli_browser_id`). Forwarding headers are not trusted: a client could set them.
 */
import type { Context } from "hono";
import type { RequestClient } from "../../engine/index.ts";
import { clientKey } from "../host/client-connections.ts";

const BROWSER_COOKIE = /(?:^|;\s*)agentcli_browser_id=([0-9a-f-]{36})(?:;|$)/i;

/** The address and browser cookie of the request (either may be absent). */
export function requestClient(c: Context): RequestClient {
  const env = c.env as
    | { incoming?: { socket?: { remoteAddress?: string } }; remoteAddr?: { hostname?: string } }
    | undefined;
  const address = env?.incoming?.socket?.remoteAddress ?? env?.remoteAddr?.hostname;
  const cookie = BROWSER_COOKIE.exec(c.req.header("cookie") ?? "")?.[1];
  return { address: address ? clientKey(address) : null, browserId: cookie ?? null };
}
