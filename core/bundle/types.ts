/**
 * The bundle: the deterministic archive `deploy` ships and `serve` runs (format documented
 * in docs/build.md). A gzipped ustar archive holding:
 * - `manifest.json`: format, agentcli version, name, what the deployment needs
 *   (plugins, integration packages), secret *names*, and a sha256 per file;
 * - `config.json`: the normalized {@link AgentConfig};
 * - `project/...`: AGENTS.md, skills/, user/, subagents/, mcp.json, approvals.toml.
 * `.env` values are never inside: they travel as deployment secrets.
 */
import type { AgentConfig } from "../config/index.ts";

export const BUNDLE_FORMAT = "agentcli.bundle/v1";

export interface BundleManifest {
  format: typeof BUNDLE_FORMAT;
  agentcli: string;
  name: string;
  model: string | null;
  requires: { plugins: string[]; packages: string[] };
  /** Names of the secrets the project expects (from `.env`); never values. */
  secrets: string[];
  files: Array<{ path: string; size: number; sha256: string }>;
}

export interface Bundle {
  manifest: BundleManifest;
  config: AgentConfig;
  /** Project files by path relative to the project root (`AGENTS.md`, `skills/review/SKILL.md`, ...). */
  files: ReadonlyMap<string, Uint8Array>;
}

/** Reads a bundle file as UTF-8 text, or null when absent. */
export function bundleText(bundle: Bundle, path: string): string | null {
  const bytes = bundle.files.get(path);
  return bytes ? new TextDecoder().decode(bytes) : null;
}
