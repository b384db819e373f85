/**
 * Builds and reads bundles (format in `types.ts` and docs/build.md). Building is deterministic:
 * the same project gives a byte-identical archive (sorted entries, fixed metadata, canonical
 * JSON, gzip without a timestamp).
 *
 * @example
 * const { bytes, manifest } = await buildBundle(project, { driver, version: VERSION });
 * const bundle = await readBundle(bytes);
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { agentcliError, BundleInvalid, type PluginDriver } from "../kernel/index.ts";
import type { AgentConfig, LoadedProject } from "../config/index.ts";
import { packTar, unpackTar } from "./tar.ts";
import { type Bundle, BUNDLE_FORMAT, type BundleManifest } from "./types.ts";

const MCP_ADAPTER_PACKAGE = "@modelcontextprotocol/sdk";

/** What a deployment of this config needs: plugins and packages (subagent models included). */
export function requirements(
  config: AgentConfig,
  driver: PluginDriver,
): { plugins: Set<string>; packages: Set<string> } {
  const plugins = new Set<string>();
  // A LangGraph.js project: the packages of its dependencies, no deep agent and no plugins.
  if (config.langgraph) return { plugins, packages: new Set(config.langgraph.packages ?? []) };
  const packages = new Set<string>(["@langchain/langgraph", "deepagents"]);
  const models = [config.agent.model, ...config.subagents.map((s) => s.model)].filter((m): m is string => Boolean(m));
  for (const model of models) {
    const plugin = driver.provider("model", model.slice(0, model.indexOf(":")));
    if (plugin?.kind === "model") {
      plugins.add(plugin.name);
      packages.add(plugin.model.integrationPackage);
    }
  }
  const sandbox = driver.provider("sandbox", config.sandbox.provider);
  if (sandbox?.kind === "sandbox" && config.sandbox.provider !== "none") {
    plugins.add(sandbox.name);
    if (sandbox.sandbox.partnerPackage) packages.add(sandbox.sandbox.partnerPackage);
  }
  const identity = config.auth && driver.provider("identity", config.auth.provider);
  if (identity) plugins.add(identity.name);
  return { plugins, packages };
}

/** Packs a loaded project into a bundle archive. */
export async function buildBundle(
  project: LoadedProject,
  opts: { driver: PluginDriver; version: string },
): Promise<{ bytes: Uint8Array; manifest: BundleManifest }> {
  const files = new Map(project.files);
  const requires = requirements(project.config, opts.driver);
  // Spec 2.1: when an mcp.json is present, the MCP adapter library is a dependency.
  if ([...files.keys()].some((p) => p === "mcp.json" || p.endsWith("/mcp.json"))) {
    requires.packages.add(MCP_ADAPTER_PACKAGE);
  }
  await opts.driver.runSequential("bundle:build", { files, requires, config: project.config });
  const archive = new Map<string, Uint8Array>();
  const enc = new TextEncoder();
  const listed: BundleManifest["files"] = [];
  for (const path of [...files.keys()].sort()) {
    const data = files.get(path)!;
    archive.set(`project/${path}`, data);
    listed.push({ path, size: data.length, sha256: sha256(data) });
  }
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    agentcli: opts.version,
    name: project.config.agent.name,
    model: project.config.agent.model,
    requires: { plugins: [...requires.plugins].sort(), packages: [...requires.packages].sort() },
    secrets: Object.keys(project.secrets).sort(),
    files: listed,
  };
  archive.set("manifest.json", enc.encode(canonicalJson(manifest)));
  archive.set("config.json", enc.encode(canonicalJson(project.config)));
  const bytes = new Uint8Array(gzipSync(packTar(archive), { level: 9 }));
  return { bytes, manifest };
}

/** Most a bundle may unpack to when its reader is not given a limit (a guard against gzip bombs). */
export const DEFAULT_MAX_UNPACKED_BYTES = 1024 * 1024 * 1024;

/**
 * Reads and verifies a bundle archive; a damaged or foreign file is a clear error, and so is
 * one that unpacks to more than `maxUnpackedBytes` (decompression stops there).
 */
export async function readBundle(
  bytes: Uint8Array,
  source = "bundle",
  opts: { maxUnpackedBytes?: number } = {},
): Promise<Bundle> {
  const fail = (state: string) => agentcliError(BundleInvalid, { source, problem: state });
  let entries: Map<string, Uint8Array>;
  try {
    const max = opts.maxUnpackedBytes ?? DEFAULT_MAX_UNPACKED_BYTES;
    let tar: Uint8Array;
    try {
      tar = new Uint8Array(gunzipSync(bytes, { maxOutputLength: max }));
    } catch (err) {
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
        throw new Error(`it unpacks to more than ${max} bytes`);
      }
      throw err;
    }
    entries = unpackTar(tar);
  } catch (err) {
    throw fail(`not a bundle archive (${(err as Error).message})`);
  }
  const dec = new TextDecoder();
  const parse = (name: string) => {
    const data = entries.get(name);
    if (!data) throw fail(`it has no ${name}`);
    try {
      return JSON.parse(dec.decode(data));
    } catch {
      throw fail(`${name} is not valid JSON`);
    }
  };
  const manifest = parse("manifest.json") as BundleManifest;
  if (manifest.format !== BUNDLE_FORMAT) throw fail(`format "${String(manifest.format)}" is not "${BUNDLE_FORMAT}"`);
  const config = parse("config.json") as AgentConfig;
  const files = new Map<string, Uint8Array>();
  for (const f of manifest.files ?? []) {
    const data = entries.get(`project/${f.path}`);
    if (!data) throw fail(`file "${f.path}" listed in the manifest is missing`);
    if (sha256(data) !== f.sha256) throw fail(`file "${f.path}" does not match its checksum`);
    files.set(f.path, data);
  }
  // A LangGraph.js project (config.langgraph) has graphs instead of AGENTS.md.
  if (!config?.agent?.name || (!files.has("AGENTS.md") && !config.langgraph)) {
    throw fail("it has no agent name or no AGENTS.md");
  }
  return { manifest, config, files };
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** JSON with object keys sorted, so equal values serialize to equal bytes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2) + "\n";
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.keys(v as object).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}
