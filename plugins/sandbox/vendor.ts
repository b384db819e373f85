/**
 * What the vendor sandbox plugins (sandbox_a Daytona, sandbox_c Runloop, ...) share: turning
 * a vendor's failure into an error that says what to fix (the variable of a refused key, the
 * base URL that cannot be reached, a quota), never quoting the key; and the output limit of
 * a command's result.
 */
import {
  type AgentcliError,
  agentcliError,
  SandboxVendorAnswered,
  SandboxVendorDenied,
  SandboxVendorFailed,
  SandboxVendorKeyRefused,
  SandboxVendorQuota,
  SandboxVendorUnreachable,
} from "../../core/index.ts";

/** Output of one command returned to the agent (the rest is cut and marked). */
export const OUTPUT_LIMIT = 100 * 1024;

/** What a plugin tells {@link vendorError} about its vendor. */
export interface VendorInfo {
  /** The vendor's name, e.g. "Daytona". */
  name: string;
  /** The variable holding the key, e.g. "SANDBOX_A_API_KEY". */
  keyVar: string;
  /** Where keys are made, for the hint. */
  keysUrl: string;
  /** The variable overriding the base URL, e.g. "SANDBOX_A_API_URL", and the URL in use. */
  urlVar: string;
  url: string;
  /** Values that must never appear in a message (the key). */
  secrets: string[];
}

/** Cuts `output` to {@link OUTPUT_LIMIT} characters. */
export function clip(output: string): { output: string; truncated: boolean } {
  return output.length > OUTPUT_LIMIT
    ? { output: output.slice(0, OUTPUT_LIMIT), truncated: true }
    : { output, truncated: false };
}

/** Removes the secrets from `text`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  return out;
}

/** A failed vendor call, as {@link vendorError} reads it. */
export interface VendorFailure {
  /** What failed ("Cannot create the Daytona sandbox"). */
  doing: string;
  /** What the SDK threw. */
  err: unknown;
  /** The HTTP status the vendor answered; undefined: no answer. */
  status: number | undefined;
}

/**
 * The error of a failed vendor call, for the agent (a tool error) or the log. A refused key
 * names its variable; an unreachable vendor names the base URL variable; a quota says so.
 */
export function vendorError(v: VendorInfo, { doing, err, status }: VendorFailure): AgentcliError {
  // Some SDKs start their message with the status (Runloop's "403 ..."): said once.
  const raw = scrub(String((err as Error)?.message ?? err).replace(/\s+/g, " ").trim(), v.secrets).replace(
    status === undefined ? /^$/ : new RegExp(`^${status}\\s+`),
    "",
  );
  const vendor = v.name;
  if (status === 401) {
    return agentcliError(SandboxVendorKeyRefused, { doing, vendor, variable: v.keyVar, raw, keysUrl: v.keysUrl });
  }
  if ((status === 403 || status === 429 || status === 400) && /quota|limit|exceed|too many|maximum/i.test(raw)) {
    return agentcliError(SandboxVendorQuota, { doing, vendor, status, raw });
  }
  if (status === 403) return agentcliError(SandboxVendorDenied, { doing, vendor, variable: v.keyVar, raw });
  if (status === undefined && isConnectionError(err)) {
    return agentcliError(SandboxVendorUnreachable, { doing, vendor, url: v.url, raw, urlVariable: v.urlVar });
  }
  if (status === undefined) return agentcliError(SandboxVendorFailed, { doing, raw });
  return agentcliError(SandboxVendorAnswered, { doing, vendor, status, raw });
}

/** True when no answer came back: refused, unresolvable or dropped connections, transport timeouts. */
function isConnectionError(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { name = "", code = "", message = "" } = e as { name?: string; code?: string; message?: string };
    if (
      /Connection/.test(name) ||
      /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|ERR_HTTP2_\w+)$/
        .test(code)
    ) return true;
    if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|socket hang up|fetch failed|Connection error/i.test(message)) {
      return true;
    }
  }
  return false;
}
