/**
 * Bounds of what the control plane accepts from clients, each raised by an environment
 * variable of `agentcli platform serve` (documented in `docs/control-plane.md`). Errors that enforce a
 * bound name the limit and its variable, so the message says how to raise it.
 *
 * @example
 * const limits = platformLimits(process.env); // { maxBodyBytes: 1048576, ... }
 */
import { agentcliError, EnvInvalid } from "../../kernel/index.ts";

export interface PlatformLimits {
  /** Largest JSON request body (413 above it). */
  maxBodyBytes: number;
  /** Largest upload, compressed (413 above it). */
  maxUploadBytes: number;
  /** Largest an upload may unpack to (413 above it; counted while streaming, never unpacked whole). */
  maxUnpackedBytes: number;
  /** Most entries an uploaded archive may hold (413 above it). */
  maxArchiveEntries: number;
}

const MiB = 1024 * 1024;

/** Each bound with its variable, unit and default. */
export const LIMIT_SETTINGS = {
  maxBodyBytes: { env: "AGENTCLI_PLATFORM_MAX_BODY_MB", unit: MiB, default: 1 },
  maxUploadBytes: { env: "AGENTCLI_PLATFORM_MAX_UPLOAD_MB", unit: MiB, default: 256 },
  maxUnpackedBytes: { env: "AGENTCLI_PLATFORM_MAX_UNPACKED_MB", unit: MiB, default: 512 },
  maxArchiveEntries: { env: "AGENTCLI_PLATFORM_MAX_ARCHIVE_ENTRIES", unit: 1, default: 10_000 },
} as const satisfies Record<keyof PlatformLimits, { env: string; unit: number; default: number }>;

export const DEFAULT_PLATFORM_LIMITS: PlatformLimits = Object.fromEntries(
  Object.entries(LIMIT_SETTINGS).map(([k, s]) => [k, s.default * s.unit]),
) as unknown as PlatformLimits;

/** The limits set by the environment; an unparsable value is a user error naming the variable. */
export function platformLimits(env: Record<string, string | undefined>): PlatformLimits {
  const out = { ...DEFAULT_PLATFORM_LIMITS };
  for (
    const [key, s] of Object.entries(LIMIT_SETTINGS) as Array<
      [keyof PlatformLimits, (typeof LIMIT_SETTINGS)[keyof PlatformLimits]]
    >
  ) {
    const raw = env[s.env]?.trim();
    if (!raw) continue;
    const n = Number(raw);
    const whole = s.unit === 1;
    if (!Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n)) || n * s.unit > Number.MAX_SAFE_INTEGER) {
      throw agentcliError(EnvInvalid, {
        action: 'run "agentcli platform serve"',
        name: s.env,
        value: raw,
        problem: `is not a positive ${whole ? "whole number" : "number of MiB"}`,
        fix: `Set ${s.env} to a positive ${
          whole ? "whole number" : "number of MiB"
        }, or unset it for the default (${s.default}).`,
      });
    }
    out[key] = Math.floor(n * s.unit);
  }
  return out;
}

/** "1 MiB (AGENTCLI_PLATFORM_MAX_BODY_MB)": a limit as error messages name it. */
export function describeLimit(key: keyof PlatformLimits, value: number): string {
  const s = LIMIT_SETTINGS[key];
  const shown = s.unit === MiB ? `${+(value / MiB).toFixed(2)} MiB` : String(value);
  return `${shown} (raise it with ${s.env})`;
}
