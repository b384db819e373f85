/**
 * The `deploy --dry-run` summary: what would be deployed, in words (text) or as data
 * (`--json`). Secrets appear by name only.
 */
import { type AgentConfig, describeMissing, type MissingEnv } from "../config/index.ts";
import type { BundleManifest } from "../bundle/index.ts";
import { type Diagnostic, formatDiagnostic, type PluginDriver } from "../kernel/index.ts";
import type { SecretNote, SecretPlan } from "./deploy-secrets.ts";

export interface DeploySummary {
  /** The deploy target (`--target`) and what it does. */
  target: { name: string; description: string };
  agent: { name: string; description: string };
  model: string | null;
  auth: { provider: string | null; posture: string };
  sandbox: AgentConfig["sandbox"];
  frontend: AgentConfig["frontend"];
  skills: string[];
  subagents: Array<
    { name: string; description: string; model: string; skills: string[]; mcp_servers: string[] | null }
  >;
  mcp_servers: Array<{ name: string; transport: string; url: string }>;
  approvals: string[];
  /** Exactly the secrets the deployment will store, by name. */
  secrets: string[];
  /** Why the deploy target's own credential is shipped, or why it is kept out. */
  secret_notes: SecretNote[];
  requires: BundleManifest["requires"];
  /** A LangGraph.js project's graphs (id and module), served instead of a deep agent; null for an agent.toml project. */
  graphs: Array<{ id: string; path: string }> | null;
  /** Why a real deploy would refuse, besides missing variables (a LangGraph.js project's packages). */
  refusals: string[];
  bundle: { path: string; bytes: number; sha256: string };
  missing_env: string[];
  warnings: string[];
}

export function authPosture(config: AgentConfig, driver: PluginDriver): string {
  if (!config.auth) {
    return "platform API key: every request must carry 'x-api-key: <PLATFORM_API_KEY>' (no [auth] section)";
  }
  return driver.spec("identity", config.auth.provider)?.posture ?? `provider "${config.auth.provider}"`;
}

export function makeSummary(opts: {
  config: AgentConfig;
  manifest: BundleManifest;
  driver: PluginDriver;
  target: { name: string; description: string };
  bundlePath: string;
  bundleBytes: number;
  bundleSha256: string;
  /** The secrets `deploy` will ship (`planSecrets`). */
  secrets: SecretPlan;
  missingEnv: MissingEnv[];
  warnings: Diagnostic[];
  refusals?: string[];
}): DeploySummary {
  const { config, manifest } = opts;
  const lg = config.langgraph;
  return {
    target: opts.target,
    agent: { name: config.agent.name, description: config.agent.description },
    model: config.agent.model,
    auth: { provider: config.auth?.provider ?? null, posture: authPosture(config, opts.driver) },
    sandbox: config.sandbox,
    frontend: config.frontend,
    skills: config.skills.map((s) => s.name),
    subagents: config.subagents.map((s) => ({
      name: s.name,
      description: s.description,
      model: s.model ?? "inherited",
      skills: s.skills.map((k) => k.name),
      mcp_servers: s.mcp ? Object.keys(s.mcp) : null,
    })),
    mcp_servers: Object.entries(config.mcp).map(([name, s]) => ({ name, transport: s.transport, url: s.url })),
    approvals: config.approvals,
    secrets: opts.secrets.names,
    secret_notes: opts.secrets.notes,
    requires: manifest.requires,
    graphs: lg
      ? Object.entries(lg.graphs).map(([id, g]) => ({ id, path: g.exportName ? `${g.path}:${g.exportName}` : g.path }))
      : null,
    refusals: opts.refusals ?? [],
    bundle: { path: opts.bundlePath, bytes: opts.bundleBytes, sha256: opts.bundleSha256 },
    missing_env: opts.missingEnv.map((m) => describeMissing(m)),
    warnings: opts.warnings.map(formatDiagnostic),
  };
}

export function renderSummary(s: DeploySummary): string {
  const head = [
    `Target:      ${s.target.name} (${s.target.description})`,
    `Agent:       ${s.agent.name}${s.agent.description ? ` - ${s.agent.description}` : ""}`,
  ];
  // A LangGraph.js project has its graphs, none of the deep agent's parts.
  const lines = s.graphs ? [...head, ...graphLines(s)] : [
    ...head,
    `Model:       ${s.model ?? "not chosen: no model credentials are set (see below)"}`,
    ...agentLines(s),
  ];
  if (s.warnings.length) lines.push("", "Warnings:", ...s.warnings.map((w) => `  - ${w.replace(/\n/g, "\n    ")}`));
  if (s.refusals.length) lines.push("", "A real deploy would refuse:", ...s.refusals.map((r) => `  - ${r}`));
  if (s.missing_env.length) {
    lines.push("", "A real deploy would refuse: these variables are not set:", ...s.missing_env.map((m) => `  - ${m}`));
  }
  return lines.join("\n");
}

const list = (xs: string[]) => (xs.length ? xs.join(", ") : "none");

/** The lines of a LangGraph.js project: its graphs, auth, secrets, packages and bundle. */
function graphLines(s: DeploySummary): string[] {
  return [
    `Graphs:      ${s.graphs!.length ? "" : "none"}`,
    ...s.graphs!.map((g) => `  - ${g.id} (${g.path})`),
    `Auth:        ${s.auth.posture}`,
    ...tailLines(s),
  ];
}

/** The secrets, packages and bundle lines every summary ends with. */
function tailLines(s: DeploySummary): string[] {
  return [
    `Secrets:     ${list(s.secrets)} (stored as the deployment's secrets; values never printed)`,
    ...s.secret_notes.map((n) => `  - ${n.name}${n.shipped ? "" : " (in .env)"}: ${n.reason}`),
    `Requires:    ${list(s.requires.packages)}`,
    `Bundle:      ${s.bundle.path} (${formatBytes(s.bundle.bytes)}, sha256 ${s.bundle.sha256.slice(0, 12)})`,
  ];
}

/** The lines of an agent.toml project after its model. */
function agentLines(s: DeploySummary): string[] {
  return [
    `Auth:        ${s.auth.posture}`,
    `Sandbox:     ${
      s.sandbox.provider === "none"
        ? "none (no execute tool)"
        : `${s.sandbox.provider}, one per ${s.sandbox.scope}, image ${s.sandbox.image}, template ${s.sandbox.template}`
    }`,
    ...(s.sandbox.provider === "none" ? [] : [
      `             (with --sandbox local, dev and serve run it with bubblewrap: the host's root filesystem, read-only, stands in for image ${s.sandbox.image})`,
    ]),
    `Frontend:    ${s.frontend.enabled ? `chat UI at /app ("${s.frontend.app_name}")` : "off"}`,
    `Skills:      ${list(s.skills)}`,
    `Subagents:   ${s.subagents.length ? "" : "none"}`,
    ...s.subagents.map((a) =>
      `  - ${a.name} (model: ${a.model}; skills: ${list(a.skills)}; tools: ${
        a.mcp_servers ? `own MCP: ${list(a.mcp_servers)}` : "inherited"
      })`
    ),
    `MCP servers: ${s.mcp_servers.length ? "" : "none"}`,
    ...s.mcp_servers.map((m) => `  - ${m.name} (${m.transport}) ${m.url}`),
    `Approvals:   ${list(s.approvals)}`,
    ...tailLines(s),
  ];
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
