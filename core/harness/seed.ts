/**
 * Seeds the memory namespaces of an assistant from the bundle (spec 2.8): `AGENTS.md` and
 * `skills/**` into the shared namespace, each subagent's `AGENTS.md` and `skills/**` into
 * its own namespace, and each user's `/memories/user/AGENTS.md` from `user/AGENTS.md` on
 * that user's first interaction.
 *
 * An existing entry is never overwritten when anyone has changed it: a seeded entry
 * records the sha256 of what was seeded, so a redeploy replaces only copies still
 * exactly as seeded (for example a skill that changed in the project), and an entry the
 * agent edited (or one written by someone else) stays as it is.
 */
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { Bundle } from "../bundle/index.ts";
import { sharedNamespace, subagentNamespace, userNamespace } from "./namespaces.ts";

interface SeedEntry {
  namespace: string[];
  key: string;
  content: string;
}

/** Seeds every shared and subagent entry of the bundle for one assistant; returns warnings. */
export async function seedAssistantMemory(store: BaseStore, bundle: Bundle, assistantId: string): Promise<string[]> {
  const warnings: string[] = [];
  const entries: SeedEntry[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const subagents = new Set(bundle.config.subagents.map((s) => s.name));
  for (const [path, bytes] of [...bundle.files].sort(([a], [b]) => a.localeCompare(b))) {
    const target = seedTarget(path, assistantId, subagents);
    if (!target) continue;
    let content: string;
    try {
      content = decoder.decode(bytes);
    } catch {
      warnings.push(`Skipped "${path}" when seeding memory: it is not UTF-8 text.`);
      continue;
    }
    entries.push({ ...target, content });
  }
  const seeded = new Map<string, Set<string>>();
  for (const entry of entries) {
    await seedEntry(store, entry);
    const nsKey = entry.namespace.join("/");
    if (!seeded.has(nsKey)) seeded.set(nsKey, new Set());
    seeded.get(nsKey)!.add(entry.key);
  }
  const namespaces = [sharedNamespace(assistantId), ...[...subagents].map((n) => subagentNamespace(assistantId, n))];
  for (const ns of namespaces) await removeStaleSeeds(store, ns, seeded.get(ns.join("/")) ?? new Set());
  return warnings;
}

/** Creates `/memories/user/AGENTS.md` for a user on first interaction; never overwrites. */
export async function ensureUserMemory(
  store: BaseStore,
  bundle: Bundle,
  assistantId: string,
  userId: string,
): Promise<void> {
  const ns = userNamespace(assistantId, userId);
  if (await store.get(ns, "/AGENTS.md")) return;
  const template = bundle.files.get("user/AGENTS.md");
  const content = template ? new TextDecoder().decode(template) : "";
  await store.put(ns, "/AGENTS.md", fileValue("/AGENTS.md", content, null));
}

function seedTarget(
  path: string,
  assistantId: string,
  subagents: Set<string>,
): { namespace: string[]; key: string } | null {
  if (path === "AGENTS.md" || path.startsWith("skills/")) {
    return { namespace: sharedNamespace(assistantId), key: `/${path}` };
  }
  const m = /^subagents\/([^/]+)\/(AGENTS\.md|skills\/.+)$/.exec(path);
  if (m && subagents.has(m[1])) return { namespace: subagentNamespace(assistantId, m[1]), key: `/${m[2]}` };
  return null;
}

async function seedEntry(store: BaseStore, entry: SeedEntry): Promise<void> {
  const sha = await sha256(entry.content);
  const existing = await store.get(entry.namespace, entry.key);
  if (existing) {
    const value = existing.value as { content?: unknown; seed_sha256?: unknown };
    if (value.seed_sha256 === sha) return;
    if (!(await isUnchangedSeed(value))) return;
  }
  await store.put(entry.namespace, entry.key, fileValue(entry.key, entry.content, sha));
}

async function removeStaleSeeds(store: BaseStore, namespace: string[], keep: Set<string>): Promise<void> {
  const stale: string[] = [];
  for (let offset = 0;; offset += 100) {
    const items = await store.search(namespace, { limit: 100, offset });
    for (const item of items) {
      if (item.namespace.join("/") !== namespace.join("/") || keep.has(item.key)) continue;
      if (await isUnchangedSeed(item.value as Record<string, unknown>)) stale.push(item.key);
    }
    if (items.length < 100) break;
  }
  for (const key of stale) await store.delete(namespace, key);
}

async function isUnchangedSeed(value: { content?: unknown; seed_sha256?: unknown }): Promise<boolean> {
  if (typeof value.seed_sha256 !== "string" || typeof value.content !== "string") return false;
  return (await sha256(value.content)) === value.seed_sha256;
}

function fileValue(key: string, content: string, seedSha: string | null): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    content,
    mimeType: key.endsWith(".md") ? "text/markdown" : "text/plain",
    created_at: now,
    modified_at: now,
    ...(seedSha ? { seed_sha256: seedSha } : {}),
  };
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
