/**
 * Creates each user's `/memories/user/AGENTS.md` from the bundle's `user/AGENTS.md` on that
 * user's first interaction (spec 2.8). It is the user's memory from then on: never
 * overwritten, so the agent's edits persist and redeployments never touch it.
 *
 * The rest of the bundle's memory (`AGENTS.md`, `skills/**`, each subagent's) is not copied
 * into the store: each revision serves it from its own bundle (./bundle-memory.ts).
 */
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { Bundle } from "../bundle/index.ts";
import { userNamespace } from "./namespaces.ts";

/** Whose user memory {@link ensureUserMemory} creates, from which bundle, in which store. */
export interface UserMemoryOptions {
  store: BaseStore;
  bundle: Bundle;
  assistantId: string;
  userId: string;
}

/** Creates `/memories/user/AGENTS.md` for a user on first interaction; never overwrites. */
export async function ensureUserMemory({ store, bundle, assistantId, userId }: UserMemoryOptions): Promise<void> {
  const ns = userNamespace(assistantId, userId);
  if (await store.get(ns, "/AGENTS.md")) return;
  const template = bundle.files.get("user/AGENTS.md");
  const content = template ? new TextDecoder().decode(template) : "";
  const now = new Date().toISOString();
  await store.put(ns, "/AGENTS.md", { content, mimeType: "text/markdown", created_at: now, modified_at: now });
}
