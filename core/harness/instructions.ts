/**
 * The system prompt of each agent, read from memory on every model call: the main agent's
 * `/memories/AGENTS.md` plus the user's `/memories/user/AGENTS.md` (preloaded when there is
 * an authenticated user), a subagent's own `/memories/subagents/<name>/AGENTS.md`. The store
 * it reads is the bundle's memory overlay (./bundle-memory.ts), so the instructions are the
 * revision's own. Before a main-agent run it creates the user's memory file on first
 * interaction.
 */
import { createMiddleware, SystemMessage } from "langchain";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { Bundle } from "../bundle/index.ts";
import { currentConfig } from "./memory-backend.ts";
import { assistantIdOf, authenticatedUserOf, sharedNamespace, subagentNamespace, userNamespace } from "./namespaces.ts";
import { ensureUserMemory } from "./seed.ts";

interface Common {
  /** The memory store with the bundle's files laid under it. */
  store: BaseStore;
  bundle: Bundle;
  defaultAssistantId: string;
}

/** Middleware of the main agent: user memory, and the prompt from memory. */
export function mainInstructionsMiddleware(opts: Common) {
  const userEnabled = opts.bundle.config.user.enabled;
  return createMiddleware({
    name: "AgentcliInstructions",
    beforeAgent: async () => {
      const config = currentConfig();
      const assistantId = assistantIdOf(config, opts.defaultAssistantId);
      const userId = userEnabled ? authenticatedUserOf(config) : null;
      if (userId) await ensureUserMemory({ store: opts.store, bundle: opts.bundle, assistantId, userId });
      return undefined;
    },
    wrapModelCall: async (request, handler) => {
      const config = currentConfig();
      const assistantId = assistantIdOf(config, opts.defaultAssistantId);
      const instructions = await readText(opts.store, sharedNamespace(assistantId), "/AGENTS.md");
      const userId = userEnabled ? authenticatedUserOf(config) : null;
      const parts = [instructions ?? "", MAIN_MEMORY_NOTE];
      if (userId) {
        const userMemory = (await readText(opts.store, userNamespace(assistantId, userId), "/AGENTS.md")) ?? "";
        parts.push(USER_MEMORY_NOTE, `<user_memory path="/memories/user/AGENTS.md">\n${userMemory}\n</user_memory>`);
      }
      return handler({ ...request, systemMessage: prepend(parts.filter(Boolean).join("\n\n"), request.systemMessage) });
    },
  });
}

/** Middleware of a subagent: its own AGENTS.md from its namespace as the prompt. */
export function subagentInstructionsMiddleware(opts: Common & { name: string }) {
  return createMiddleware({
    name: "AgentcliSubagentInstructions",
    wrapModelCall: async (request, handler) => {
      const assistantId = assistantIdOf(currentConfig(), opts.defaultAssistantId);
      const instructions = await readText(opts.store, subagentNamespace(assistantId, opts.name), "/AGENTS.md");
      const note =
        `Your own memory is /memories/subagents/${opts.name}/ (read and write); nothing else under /memories is visible to you.`;
      return handler({
        ...request,
        systemMessage: prepend([instructions ?? "", note].filter(Boolean).join("\n\n"), request.systemMessage),
      });
    },
  });
}

const MAIN_MEMORY_NOTE = [
  "## Memory",
  "- /memories/AGENTS.md (these instructions) and /memories/skills/ are read-only.",
  "- /memories/subagents/<name>/ holds each subagent's memory; you can read it but not change it.",
].join("\n");

const USER_MEMORY_NOTE = [
  "## What you remember about this user",
  "/memories/user/AGENTS.md is your memory of the current user, shown below. Update it with `edit_file`",
  "when you learn something worth remembering across conversations; other files under /memories/user/ are yours to use too.",
].join("\n");

async function readText(store: BaseStore, namespace: string[], key: string): Promise<string | null> {
  const item = await store.get(namespace, key);
  const content = (item?.value as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.join("\n");
  return null;
}

function prepend(text: string, existing: SystemMessage | undefined): SystemMessage {
  const content = existing?.content;
  if (!content) return new SystemMessage(text);
  if (typeof content === "string") return new SystemMessage(`${text}\n\n${content}`);
  return new SystemMessage({ content: [{ type: "text", text }, ...content] });
}
