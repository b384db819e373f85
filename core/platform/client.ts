/**
 * The control plane's client: calls its `/v2` API with the `PLATFORM_API_KEY` of an environment.
 * The `platform` deploy target (plugins/deploy/platform.ts, through core/index.ts) and `deploy`'s
 * release actions (cli/release.ts) use it. Every failure is a catalogue error: the control plane
 * unreachable, the key missing or refused (401), any other refusal with the control plane's
 * reason (its `message`, its `detail` text or field list, else the start of its body), and a call
 * cut by the caller's `signal` is `DeployInterrupted`.
 */
import {
  agentcliError,
  DeployInterrupted,
  type Env,
  PlatformKeyMissing,
  PlatformKeyRefused,
  PlatformRequestFailed,
  PlatformUnreachable,
} from "../kernel/index.ts";

/** Where the client goes when neither `base` nor `AGENTCLI_PLATFORM_URL` says. */
export const DEFAULT_PLATFORM_URL = "http://127.0.0.1:8100";

export interface PlatformClient {
  /** The control plane's address, without a trailing `/`. */
  readonly base: string;
  /** `method path` with `body` as JSON; the answer's JSON (null when empty). */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** A client of the control plane at `base` (default: `AGENTCLI_PLATFORM_URL`, else {@link DEFAULT_PLATFORM_URL}). */
export function platformClient(o: { env: Env; base?: string; signal?: AbortSignal }): PlatformClient {
  const key = o.env.PLATFORM_API_KEY;
  if (!key) throw agentcliError(PlatformKeyMissing);
  const base = (o.base || o.env.AGENTCLI_PLATFORM_URL || DEFAULT_PLATFORM_URL).replace(/\/+$/, "");
  const { signal } = o;
  /** A request or answer that did not get through: stopped by the caller, or the control plane out of reach. */
  const cut = (err: unknown) => {
    if (signal?.aborted) return agentcliError(DeployInterrupted);
    const reason = err instanceof Error ? (err.cause as Error | undefined)?.message ?? err.message : String(err);
    return agentcliError(PlatformUnreachable, { base, reason });
  };
  return {
    base,
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal,
        });
      } catch (err) {
        throw cut(err);
      }
      const text = await res.text().catch((err) => {
        throw cut(err);
      });
      const parsed = text ? parseJson(text) : null;
      if (res.ok) return parsed as T;
      const reason = refusalReason(parsed, text) || `HTTP ${res.status}`;
      if (res.status === 401) throw agentcliError(PlatformKeyRefused, { base, reason });
      throw agentcliError(PlatformRequestFailed, { method, path, reason }, { status: res.status });
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The control plane's reason for a refusal: `message`, `detail` (text, or its `{loc, msg}` list), else the body's start. */
function refusalReason(parsed: unknown, text: string): string {
  if (parsed === undefined) return text.slice(0, 200);
  const { message, detail } = (parsed ?? {}) as { message?: unknown; detail?: unknown };
  if (typeof message === "string") return message;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join(".")}: ${d.msg}`).join("; ");
  }
  return "";
}
