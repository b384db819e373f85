/**
 * Run webhooks: when a run with a `webhook` ends (success, error, timeout, interrupted), its
 * final result is POSTed there as LangGraph sends it: the run record plus `values`, `error`
 * and `webhook_sent_at`. Each attempt has a timeout; network errors, timeouts, 429 and 5xx
 * are retried with doubling delays. With a secret, the body is signed (HMAC-SHA256, header
 * `X-Agentcli-Signature: sha256=<hex>`). The outcome is recorded in the run's
 * `metadata.webhook_delivery`. Targets on private, loopback or link-local addresses are
 * refused unless allowed (`dev` allows them): checked when the run is created, and at each
 * attempt on the very addresses the connection is made to (the host is resolved once per
 * connection and the checked address is the one dialled, so a name that resolves to a public
 * address for the check and to a private one for the connection cannot get through);
 * redirects are not followed.
 *
 * @example
 * const hooks = new WebhookSender(webhooksFromEnv(process.env, "serve"), { storage, log });
 * await hooks.check("https://example.com/hook"); // throws a 422 for a refused target
 */
import { Buffer } from "node:buffer";
import {
  agentcliError,
  EnvNotInRange,
  EnvNotTrueFalse,
  redact,
  type ServerLog,
  unprocessable,
  VERSION,
} from "../../kernel/index.ts";
import type { Storage } from "../../storage/index.ts";

export interface WebhookSettings {
  /** HMAC-SHA256 key of the signature header (`AGENTCLI_WEBHOOK_SECRET`); no header without it. */
  secret?: string;
  /** Private, loopback and link-local targets allowed (`dev`, or `AGENTCLI_WEBHOOK_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
  /** One attempt's time limit (`AGENTCLI_WEBHOOK_TIMEOUT_SECONDS`, default 10 s). */
  timeoutMs: number;
  /** Attempts in all (`AGENTCLI_WEBHOOK_MAX_ATTEMPTS`, default 5). */
  maxAttempts: number;
  /** Delay before the first retry, doubled for each next one (default 1000 ms). */
  backoffMs: number;
}

/** The header carrying the body's signature. */
export const SIGNATURE_HEADER = "X-Agentcli-Signature";

export const DEFAULT_WEBHOOKS: WebhookSettings = {
  allowPrivate: false,
  timeoutMs: 10_000,
  maxAttempts: 5,
  backoffMs: 1000,
};

function intSetting(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
  what: string,
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw agentcliError(EnvNotInRange, {
      name,
      value: raw,
      min,
      max,
      fix: `Set ${name} to ${what}, or leave it unset (default ${fallback}).`,
    });
  }
  return n;
}

/** Webhook settings from the environment; private targets are always allowed under `dev`. */
export function webhooksFromEnv(env: Record<string, string | undefined>, mode: "dev" | "serve"): WebhookSettings {
  const rawAllow = env.AGENTCLI_WEBHOOK_ALLOW_PRIVATE?.trim().toLowerCase() ?? "";
  if (rawAllow && !["true", "false", "1", "0"].includes(rawAllow)) {
    throw agentcliError(EnvNotTrueFalse, {
      name: "AGENTCLI_WEBHOOK_ALLOW_PRIVATE",
      value: env.AGENTCLI_WEBHOOK_ALLOW_PRIVATE ?? "",
      fix: "Set it to true to let run webhooks reach private and loopback addresses (default false under serve).",
    });
  }
  return {
    secret: env.AGENTCLI_WEBHOOK_SECRET || undefined,
    allowPrivate: mode === "dev" || rawAllow === "true" || rawAllow === "1",
    timeoutMs:
      intSetting(env, "AGENTCLI_WEBHOOK_TIMEOUT_SECONDS", 10, 1, 600, "the seconds one delivery attempt may take") *
      1000,
    maxAttempts: intSetting(env, "AGENTCLI_WEBHOOK_MAX_ATTEMPTS", 5, 1, 20, "how many times a webhook is tried in all"),
    backoffMs: DEFAULT_WEBHOOKS.backoffMs,
  };
}

/** True for an http(s) URL (what a `webhook` must be). */
export function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}

function ipv4Private(ip: string): boolean {
  const [a, b] = ip.split(".").map(Number) as [number, number];
  return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 192 && b === 0) || (a === 198 && (b === 18 || b === 19)) || a >= 224;
}

/**
 * Whether an address is not on the public internet: loopback, private (RFC 1918, unique
 * local), link-local (cloud metadata services live there), shared, unspecified, multicast or
 * reserved, IPv4-mapped forms included.
 */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, "").toLowerCase().replace(/%.*$/, "");
  if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return ipv4Private(ip);
  if (!ip.includes(":")) return false;
  const mapped = ip.match(/^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/) ?? ip.match(/^::(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped) return ipv4Private(mapped[1]!);
  const hex = ip.match(/^(?:0*:)*:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (hex) {
    const n = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
    return ipv4Private([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join("."));
  }
  if (ip === "::" || ip === "::1") return true;
  const first = parseInt(ip.split(":")[0] || "0", 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00 ||
    ip.startsWith("64:ff9b:") || ip.startsWith("2001:db8:");
}

/** Resolves a host name to its addresses (`dns.lookup` with `all`; replaced in tests). */
export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = async (host) => {
  const { lookup } = await import("node:dns/promises");
  return lookup(host, { all: true, verbatim: true });
};

/** Why a host is refused by name or as an address literal (no lookup), or null. */
function literalRefusal(host: string): string | null {
  if (host === "localhost" || host.endsWith(".localhost")) return `its host "${host}" is loopback`;
  if (/^[\d.]+$/.test(host) || host.includes(":")) {
    return isPrivateAddress(host) ? `its address ${host} is private or loopback` : null;
  }
  return null;
}

/** Why the target is refused (a private address it names or resolves to), or null. */
async function refusal(url: URL, allowPrivate: boolean, resolve: Resolver): Promise<string | null> {
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const literal = literalRefusal(host);
  if (literal || /^[\d.]+$/.test(host) || host.includes(":")) return literal;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await resolve(host);
  } catch {
    return null; // an unresolvable host fails at delivery, where it is recorded
  }
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  return bad ? `its host "${host}" resolves to ${bad.address}, a private or loopback address` : null;
}

/** A connection refused because its host resolved to a private address (see `pinnedLookup`). */
class RefusedAddress extends Error {}

/**
 * The `lookup` of a delivery's connection: resolves the host once and hands the connection
 * the addresses it checked, so what is dialled is what was checked (no second resolution
 * that could answer otherwise). Any private answer refuses the whole name.
 */
function pinnedLookup(resolve: Resolver, allowPrivate: boolean) {
  return (
    host: string,
    options: { all?: boolean; family?: number },
    callback: (err: Error | null, address?: unknown, family?: number) => void,
  ): void => {
    resolve(host).then((found) => {
      const family = options.family === 4 || options.family === 6 ? options.family : 0;
      const addresses = family ? found.filter((a) => a.family === family) : found;
      const bad = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (bad) {
        return callback(
          new RefusedAddress(`its host "${host}" resolves to ${bad.address}, a private or loopback address`),
        );
      }
      if (!addresses.length) {
        return callback(Object.assign(new Error(`cannot resolve "${host}"`), { code: "ENOTFOUND" }));
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    }, (err: Error) => callback(err));
  };
}

/**
 * POSTs `body` to `url` over a connection whose host is resolved by `pinnedLookup`; resolves
 * with the answer's status (its body is discarded). Redirects are not followed.
 */
async function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  opts: { signal: AbortSignal; resolve: Resolver; allowPrivate: boolean },
): Promise<number> {
  const { request } = url.protocol === "https:" ? await import("node:https") : await import("node:http");
  return new Promise<number>((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      signal: opts.signal,
      lookup: pinnedLookup(opts.resolve, opts.allowPrivate) as never,
    }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The target of a webhook without its query and credentials (which may hold tokens), for logs and records. */
function shown(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

async function sign(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(body)));
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** What `metadata.webhook_delivery` of a run records. */
export interface WebhookDelivery {
  status: "delivered" | "failed" | "refused";
  attempts: number;
  /** The HTTP status of the last answer, when there was one. */
  response_status: number | null;
  /** Why the last attempt failed. */
  error: string | null;
  at: string;
}

/** Delivers run webhooks in the background, retrying, and records each outcome. */
export class WebhookSender {
  readonly settings: WebhookSettings;
  readonly #deps: { storage: Storage; log: ServerLog };
  readonly #resolve: Resolver;
  readonly #inflight = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  /** `resolve`: how host names are resolved (the system's `dns.lookup` unless given). */
  constructor(settings: WebhookSettings, deps: { storage: Storage; log: ServerLog; resolve?: Resolver }) {
    this.settings = settings;
    this.#deps = deps;
    this.#resolve = deps.resolve ?? systemResolver;
  }

  /** Throws a 422 when runs may not call `raw` (not http(s), or a refused private target). */
  async check(raw: string, field = "webhook"): Promise<void> {
    if (!isHttpUrl(raw)) throw unprocessable(`Invalid request: ${field} must be an http:// or https:// URL`);
    const why = await refusal(new URL(raw), this.settings.allowPrivate, this.#resolve);
    if (why) {
      throw unprocessable(
        `Invalid request: ${field} ${
          shown(new URL(raw))
        } is refused: ${why} (allow such targets with AGENTCLI_WEBHOOK_ALLOW_PRIVATE=true)`,
      );
    }
  }

  /** Sends `payload` (the run and its result) to `webhook` in the background. */
  deliver(runId: string, webhook: string, payload: Record<string, unknown>): void {
    const p = this.#deliver(runId, webhook, payload).catch((err) =>
      this.#deps.log.error(`run ${runId}: webhook delivery failed`, err)
    );
    this.#inflight.add(p);
    void p.finally(() => this.#inflight.delete(p));
  }

  async #deliver(runId: string, webhook: string, payload: Record<string, unknown>): Promise<void> {
    const url = new URL(webhook);
    const { settings } = this;
    let outcome: WebhookDelivery = { status: "failed", attempts: 0, response_status: null, error: null, at: "" };
    for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
      if (attempt > 1) {
        const delay = settings.backoffMs * 2 ** (attempt - 2) * (0.75 + Math.random() / 2);
        if (!(await this.#sleep(delay))) {
          outcome = { ...outcome, error: `${outcome.error}; the server stopped before the next attempt` };
          break;
        }
      }
      outcome.attempts = attempt;
      // Names and literals here; what a host name resolves to, on the connection itself.
      const why = settings.allowPrivate ? null : literalRefusal(url.hostname.replace(/^\[|\]$/g, ""));
      if (why) {
        outcome = { ...outcome, status: "refused", error: `refused: ${why}` };
        break;
      }
      // The run's output and error leave the process here too: redacted like every response (core/kernel/redact.ts).
      const body = redact(JSON.stringify({ ...payload, webhook_sent_at: new Date().toISOString() }));
      const headers: Record<string, string> = {
        "content-type": "application/json",
        "user-agent": `agentcli/${VERSION}`,
      };
      if (settings.secret) headers[SIGNATURE_HEADER.toLowerCase()] = await sign(settings.secret, body);
      const timeout = AbortSignal.timeout(settings.timeoutMs);
      try {
        const status = await post(url, headers, body, {
          signal: AbortSignal.any([timeout, this.#stop.signal]),
          resolve: this.#resolve,
          allowPrivate: settings.allowPrivate,
        });
        outcome.response_status = status;
        if (status >= 200 && status < 300) {
          outcome = { ...outcome, status: "delivered", error: null };
          break;
        }
        outcome.error = status >= 300 && status < 400
          ? `answered ${status} (redirects are not followed)`
          : `answered ${status}`;
        if (status !== 429 && status < 500) break;
      } catch (err) {
        const e = err as Error;
        outcome.response_status = null;
        if (e instanceof RefusedAddress) {
          outcome = { ...outcome, status: "refused", error: `refused: ${e.message}` };
          break;
        }
        outcome.error = timeout.aborted && !this.#stop.signal.aborted
          ? `no answer within ${settings.timeoutMs / 1000} s`
          : `cannot connect: ${(e.cause as Error | undefined)?.message ?? e.message}`;
        if (this.#stop.signal.aborted) break;
      }
    }
    outcome.at = new Date().toISOString();
    if (outcome.status !== "delivered") {
      this.#deps.log.warn(
        `run ${runId}: webhook ${shown(url)} ${outcome.status} after ${outcome.attempts} attempt(s): ${outcome.error}`,
      );
    }
    await this.#deps.storage.runs.recordWebhookDelivery(runId, outcome).catch(() => {}); // a stateless run may be gone with its thread
  }

  /** Waits `ms`; false when the sender stopped meanwhile. */
  #sleep(ms: number): Promise<boolean> {
    const signal = this.#stop.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Stops retrying (a waiting retry is recorded as failed) and waits for the deliveries to be recorded. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.allSettled([...this.#inflight]);
  }
}
