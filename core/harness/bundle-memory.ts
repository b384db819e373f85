/**
 * The read-only part of memory comes from the revision's own bundle, not from the database
 * (issue 37). `/memories/AGENTS.md` and `/memories/skills/**` (spec 2.1: "read-only at
 * runtime") and each subagent's `AGENTS.md` and `skills/**` are served from the bundle the
 * graph was built from, so two revisions of one deployment that share a database (a gated
 * candidate, a canary, a rollback) each answer with their own instructions and skills, and
 * starting one never changes what another serves. What the agent writes stays in the store
 * and is an overlay:
 *
 * - shared namespace: the bundle's `AGENTS.md` and `skills/**` are the only ones (the main
 *   agent cannot write there); other keys come from the store;
 * - a subagent's namespace (read + write for that subagent): a file the subagent wrote wins
 *   over the bundle's file of the same path; otherwise the bundle's file shows;
 * - either namespace: a copy an earlier agentcli seeded into the store and nobody changed
 *   since (its `seed_sha256` still matches) is hidden: it is some revision's bundle, not
 *   memory. Such copies are left in place: an older revision may still read them.
 *
 * Users' memory is untouched (see ./seed.ts: created on first interaction, never overwritten).
 *
 * @example
 * const { store, warnings } = bundleMemory(memoryStoreOfThePlugin, bundle);
 */
import {
  BaseStore,
  type GetOperation,
  type Item,
  type Operation,
  type OperationResults,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { createHash } from "node:crypto";
import type { Bundle } from "../bundle/index.ts";
import { encodeLabel } from "./namespaces.ts";

/** Bundle files by key (`/AGENTS.md`, `/skills/review/SKILL.md`) for one kind of namespace. */
type Files = ReadonlyMap<string, string>;

interface Overlay {
  files: Files;
  /** True in the shared namespace: the bundle alone decides its `AGENTS.md` and `skills/**`. */
  bundleOnly: boolean;
}

/** Wraps the memory store so the bundle's instructions and skills show in it; returns start warnings too. */
export function bundleMemory(store: BaseStore, bundle: Bundle): { store: BaseStore; warnings: string[] } {
  const warnings: string[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const shared = new Map<string, string>();
  const subagents = new Map<string, Map<string, string>>(
    bundle.config.subagents.map((s) => [encodeLabel(s.name), new Map<string, string>()]),
  );
  for (const [path, bytes] of [...bundle.files].sort(([a], [b]) => a.localeCompare(b))) {
    const sub = /^subagents\/([^/]+)\/(AGENTS\.md|skills\/.+)$/.exec(path);
    const target = path === "AGENTS.md" || path.startsWith("skills/")
      ? { files: shared, key: `/${path}` }
      : sub && subagents.has(encodeLabel(sub[1]!))
      ? { files: subagents.get(encodeLabel(sub[1]!))!, key: `/${sub[2]}` }
      : null;
    if (!target) continue;
    try {
      target.files.set(target.key, decoder.decode(bytes));
    } catch {
      warnings.push(`Skipped "${path}" in /memories: it is not UTF-8 text.`);
    }
  }
  return { store: new BundleMemoryStore(store, { shared, subagents }), warnings };
}

/** Keys the bundle provides in a namespace: `/AGENTS.md` and everything under `/skills/`. */
function bundleKey(key: string): boolean {
  return key === "/AGENTS.md" || key.startsWith("/skills/");
}

/** The memory store with the bundle's files laid under it (see the file comment). */
class BundleMemoryStore extends BaseStore {
  readonly #inner: BaseStore;
  readonly #shared: Files;
  readonly #subagents: ReadonlyMap<string, Files>;
  /** When the bundle's files were loaded: their created and modified times. */
  readonly #loaded = new Date();

  constructor(inner: BaseStore, files: { shared: Files; subagents: ReadonlyMap<string, Files> }) {
    super();
    this.#inner = inner;
    this.#shared = files.shared;
    this.#subagents = files.subagents;
  }

  /** The overlay of a namespace: `["agentcli", <assistant>, "memories"]` or `[..., "subagents", <name>]`. */
  #overlay(namespace: string[]): Overlay | null {
    if (namespace[0] !== "agentcli") return null;
    if (namespace.length === 3 && namespace[2] === "memories") return { files: this.#shared, bundleOnly: true };
    const sub = namespace.length === 4 && namespace[2] === "subagents" ? this.#subagents.get(namespace[3]!) : undefined;
    return sub ? { files: sub, bundleOnly: false } : null;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const touches = operations.some((op) =>
      "namespacePrefix" in op
        ? this.#overlay(op.namespacePrefix)
        : "key" in op && !("value" in op) && this.#overlay(op.namespace)
    );
    if (!touches) return await this.#inner.batch(operations);
    const results: unknown[] = [];
    for (const op of operations) {
      if ("namespacePrefix" in op && this.#overlay(op.namespacePrefix)) results.push(await this.#search(op));
      else if ("key" in op && !("value" in op) && this.#overlay(op.namespace)) results.push(await this.#get(op));
      else results.push((await this.#inner.batch([op]))[0]);
    }
    return results as OperationResults<Op>;
  }

  async #get(op: GetOperation): Promise<Item | null> {
    const overlay = this.#overlay(op.namespace)!;
    const stored = overlay.bundleOnly && bundleKey(op.key) ? null : await this.#inner.get(op.namespace, op.key);
    if (stored && !isUnchangedSeed(stored.value)) return stored;
    return this.#bundleItem(op.namespace, op.key, overlay.files);
  }

  /** The store's entries that still count, then the bundle's files not written over, by key. */
  async #search(op: SearchOperation): Promise<Item[]> {
    const namespace = op.namespacePrefix;
    const overlay = this.#overlay(namespace)!;
    const own = namespace.join("\u0000");
    const stored: Item[] = [];
    for (let offset = 0;; offset += 100) {
      const page = await this.#inner.search(namespace, { filter: op.filter, query: op.query, limit: 100, offset });
      stored.push(...page);
      if (page.length < 100) break;
    }
    const visible = stored.filter((item) => {
      if (item.namespace.join("\u0000") !== own) return true;
      if (overlay.bundleOnly && bundleKey(item.key)) return false;
      return !isUnchangedSeed(item.value);
    });
    const written = new Set(visible.filter((i) => i.namespace.join("\u0000") === own).map((i) => i.key));
    const fromBundle = op.query || (op.filter && Object.keys(op.filter).length)
      ? []
      : [...overlay.files.keys()].filter((k) => !written.has(k)).map((k) =>
        this.#bundleItem(namespace, k, overlay.files)!
      );
    const all = [...visible, ...fromBundle].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const offset = op.offset ?? 0;
    return all.slice(offset, offset + (op.limit ?? 10));
  }

  #bundleItem(namespace: string[], key: string, files: Files): Item | null {
    const content = files.get(key);
    if (content === undefined) return null;
    const at = this.#loaded.toISOString();
    return {
      namespace,
      key,
      value: {
        content,
        mimeType: key.endsWith(".md") ? "text/markdown" : "text/plain",
        created_at: at,
        modified_at: at,
      },
      createdAt: this.#loaded,
      updatedAt: this.#loaded,
    };
  }
}

/** True for a copy an earlier agentcli seeded from a bundle and nobody changed since. */
function isUnchangedSeed(value: Record<string, unknown>): boolean {
  if (typeof value.seed_sha256 !== "string" || typeof value.content !== "string") return false;
  return createHash("sha256").update(value.content).digest("hex") === value.seed_sha256;
}
