/**
 * The `Host` allow-list, against DNS rebinding: a web page whose name an attacker points at
 * 127.0.0.1 makes the browser send `Host: evil.example:2024` to a server on this machine, so
 * a server answers only the names it serves. Always allowed: no `Host` at all (not a
 * browser), `localhost` and `*.localhost`, and IP addresses (a page served from an IP
 * address cannot rebind its name). Names beyond those come from `AGENTCLI_ALLOWED_HOSTS`,
 * in the style of Vite's `server.allowedHosts`: exact names, `.example.com` for a domain and
 * its subdomains, `*` or `true` for any. Without it, `dev` (any bind) and servers bound to
 * a loopback address allow no other name; `serve` and the control plane bound elsewhere
 * (`0.0.0.0` in a container behind a load balancer) allow any, as they reach users by names
 * the server cannot know.
 *
 * @example
 * const hosts = allowedHostsFromEnv(process.env, { mode: "dev", bind: "127.0.0.1" });
 * hostAllowed(hosts, "evil.example:2024"); // false
 * hostAllowed(hosts, "localhost:2024"); // true
 */
import { agentcliError, EnvListEntryInvalid } from "../../kernel/index.ts";

/** The environment variable that lists the allowed host names. */
export const ALLOWED_HOSTS_VARIABLE = "AGENTCLI_ALLOWED_HOSTS";

/** Which `Host` names a server answers, besides loopback names and IP addresses. */
export type AllowedHosts =
  | { any: true }
  | {
    any: false;
    /** Exact names, lower case, without a port. */
    names: string[];
    /** From `.example.com` entries: `example.com` itself and any name ending in `.example.com`. */
    domains: string[];
  };

/** Whether `bind` (a `--host` value) is a loopback address or name. */
export function isLoopbackBind(bind: string): boolean {
  const h = bind.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The default: loopback names and IP addresses only, unless `serve`/`platform` binds a non-loopback address (any name). */
export function defaultAllowedHosts(opts: { mode: "dev" | "serve" | "platform"; bind: string }): AllowedHosts {
  if (opts.mode !== "dev" && !isLoopbackBind(opts.bind)) return { any: true };
  return { any: false, names: [], domains: [] };
}

/**
 * The allow-list from `AGENTCLI_ALLOWED_HOSTS` (comma-separated), or {@link defaultAllowedHosts}
 * when it is unset. A value that is not a host name stops the start with a user error.
 */
export function allowedHostsFromEnv(
  env: Record<string, string | undefined>,
  opts: { mode: "dev" | "serve" | "platform"; bind: string },
): AllowedHosts {
  const raw = env[ALLOWED_HOSTS_VARIABLE]?.trim();
  if (!raw) return defaultAllowedHosts(opts);
  const entries = raw.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (entries.some((e) => e === "*" || e === "true")) return { any: true };
  const names: string[] = [];
  const domains: string[] = [];
  for (const entry of entries) {
    const name = entry.startsWith(".") ? entry.slice(1) : entry;
    if (!/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name)) {
      throw agentcliError(EnvListEntryInvalid, {
        name: ALLOWED_HOSTS_VARIABLE,
        entry,
        expected: "a host name",
        fix:
          "List host names without scheme, port or path, separated by commas: agent.example.com for that name, .example.com for example.com and its subdomains, * for any.",
      });
    }
    (entry.startsWith(".") ? domains : names).push(name);
  }
  return { any: false, names, domains };
}

/** The name in a `Host` header value: lower case, without port, brackets or a trailing dot. */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") < 0 ? undefined : h.indexOf("]"));
  const colon = h.lastIndexOf(":");
  return (colon >= 0 ? h.slice(0, colon) : h).replace(/\.$/, "");
}

/** Whether a request with this `Host` header (null: none) may be served. */
export function hostAllowed(hosts: AllowedHosts, header: string | null | undefined): boolean {
  if (hosts.any || header == null) return true;
  const name = hostName(header);
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name) || (name.includes(":") && /^[0-9a-f:.]+$/.test(name))) return true;
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (hosts.names.includes(name)) return true;
  return hosts.domains.some((d) => name === d || name.endsWith(`.${d}`));
}

/** What a refused request gets: a 403 naming the setting. */
export function refusedHostMessage(header: string): string {
  const shown = header.length > 100 ? `${header.slice(0, 100)}...` : header;
  return `Cannot serve a request for host "${shown}": it is not a name this server answers to (a page that rebinds its name to this machine sends such requests). If you reach the server by that name, add it to ${ALLOWED_HOSTS_VARIABLE} (comma-separated; .example.com for a domain and its subdomains, * for any).`;
}

/** The 403 response for a refused `Host`. */
export function refusedHostResponse(header: string): Response {
  return Response.json({ detail: refusedHostMessage(header) }, { status: 403 });
}
