/**
 * Where the memory of a deployed agent lives in the store (spec 2.8), and who is asking.
 *
 * Every namespace starts with `["agentcli", <assistant id>]`, so two assistants never share
 * memory:
 * - `[..., "memories"]`: `/memories/AGENTS.md` and `/memories/skills/**` (shared, read-only);
 * - `[..., "users", <user id>]`: `/memories/user/**` (one per authenticated user);
 * - `[..., "subagents", <name>]`: `/memories/subagents/<name>/**`.
 * Labels are encoded so any user id (an email, a URL) is a valid store label.
 */
import type { RunnableConfig } from "@langchain/core/runnables";

/** The store namespace of the shared memory (`/memories/AGENTS.md`, `/memories/skills/**`). */
export function sharedNamespace(assistantId: string): string[] {
  return ["agentcli", encodeLabel(assistantId), "memories"];
}

/** The store namespace of one user's memory (`/memories/user/**`). */
export function userNamespace(assistantId: string, userId: string): string[] {
  return ["agentcli", encodeLabel(assistantId), "users", encodeLabel(userId)];
}

/** The store namespace of one subagent (`/memories/subagents/<name>/**`). */
export function subagentNamespace(assistantId: string, name: string): string[] {
  return ["agentcli", encodeLabel(assistantId), "subagents", encodeLabel(name)];
}

/**
 * Makes a string safe as a store namespace label: letters, digits, `_`, `-`, `@`, `+`
 * stay; every other byte (including `.`, which LangGraph stores refuse) becomes `~XX`.
 */
export function encodeLabel(value: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(value)) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9_\-@+]/.test(ch) ? ch : `~${byte.toString(16).padStart(2, "0")}`;
  }
  return out || "~";
}

type Configurable = Record<string, unknown>;

/**
 * The assistant a run belongs to: `configurable.assistant_id` or `metadata.assistant_id`
 * as set by the agent server, else the fallback (the agent's name).
 */
export function assistantIdOf(config: RunnableConfig | undefined, fallback: string): string {
  const fromConfigurable = (config?.configurable as Configurable | undefined)?.assistant_id;
  const fromMetadata = (config?.metadata as Configurable | undefined)?.assistant_id;
  const id = typeof fromConfigurable === "string" && fromConfigurable
    ? fromConfigurable
    : typeof fromMetadata === "string" && fromMetadata
    ? fromMetadata
    : fallback;
  return id;
}

/**
 * The authenticated user of a run, or null. The server injects `langgraph_auth_user`
 * (with `is_authenticated`, or `isAuthenticated` as the server's `AuthUser` spells it) and `graph_auth_user_id` into `configurable` and strips any
 * client-supplied values; `is_authenticated === false` (the anonymous handler) or no
 * identity means there is no authenticated user, and user memory is skipped.
 */
export function authenticatedUserOf(config: RunnableConfig | undefined): string | null {
  const configurable = (config?.configurable ?? {}) as Configurable;
  const authUser = configurable.langgraph_auth_user as Configurable | undefined;
  if (!authUser || typeof authUser !== "object") return null;
  if ((authUser.is_authenticated ?? authUser.isAuthenticated) !== true) return null;
  const identity = authUser.identity ?? configurable.graph_auth_user_id;
  return typeof identity === "string" && identity ? identity : null;
}
