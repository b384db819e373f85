/**
 * The request's client, for usage limits: its address and the chat UI's per-browser cookie
 * (`agentcli_browser_id`). The address is the socket's (as the Node adapter or Deno gives
 * it), unless the server sits behind a proxy that names the client in a header
 * (`AGENTCLI_CLIENT_ADDRESS_HEADER`, e.g. `x-forwarded-for`: its last entry, the one the
 * proxy appended). Forwarding headers are not read otherwise: a client could set them. IPv6
 * addresses count per /64.
 */
import type { Context } from "hono";
import type { RequestClient } from "../../engine/index.ts";
import { clientKey } from "../host/client-connections.ts";
import type { ServerDeps } from "../deps.ts";

const BROWSER_COOKIE = /(?:^|;\s*)agentcli_browser_id=([0-9a-f-]{36})(?:;|$)/i;

/** The address and browser cookie of the request (either may be absent). */
export function requestClient(c: Context, deps: Pick<ServerDeps, "usage">): RequestClient {
  const header = deps.usage?.addressHeader;
  const named = header ? c.req.header(header)?.split(",").at(-1)?.trim() : undefined;
  const env = c.env as
    | { incoming?: { socket?: { remoteAddress?: string } }; remoteAddr?: { hostname?: string } }
    | undefined;
  const address = named || env?.incoming?.socket?.remoteAddress || env?.remoteAddr?.hostname;
  const cookie = BROWSER_COOKIE.exec(c.req.header("cookie") ?? "")?.[1];
  return { address: address ? clientKey(address) : null, browserId: cookie ?? null };
}
