/**
 * Builds the deep agent of a bundle: the main agent (prompt from `/memories/AGENTS.md`, the bundle's,
 * todos, file tools over the memory namespaces, skills, MCP tools, `task` for subagents,
 * `execute` when a sandbox is configured, summarization and large-result eviction,
 * approval gates), on LangChain's `createAgent` with the `deepagents` middleware.
 */
import { type AgentMiddleware, createAgent, createMiddleware, SystemMessage, todoListMiddleware } from "langchain";
import {
  createFilesystemMiddleware,
  createPatchToolCallsMiddleware,
  createSkillsMiddleware,
  createSubAgentMiddleware,
  createSummarizationMiddleware,
  type FsToolName,
  StateBackend,
  type SubAgent,
} from "deepagents";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Bundle } from "../bundle/index.ts";
import type { Env, HookLogger, PluginDriver } from "../kernel/index.ts";
import { approvalMiddleware, resolveApprovals, type ToolOrigin } from "./approvals.ts";
import { mainInstructionsMiddleware, subagentInstructionsMiddleware } from "./instructions.ts";
import { connectMcpServers, type McpToolSet } from "./mcp.ts";
import type { McpConnector } from "./mcp-pool.ts";
import { createMemoryBackend } from "./memory-backend.ts";
import { modelSelectionMiddleware, PendingChatModel } from "./model.ts";
import { mainAgentPermissions, subagentPermissions } from "./permissions.ts";
import { PluginSandboxBackend, skillSeedFiles } from "./sandbox/backend.ts";
import { executeMiddleware } from "./sandbox/execute-tool.ts";
import type { SandboxManager } from "./sandbox/manager.ts";
import { toolErrorsMiddleware } from "./tool-errors.ts";
import { contextRedactionMiddleware } from "./context-redaction.ts";
import { memoryStore } from "./memory-store.ts";
import { bundleMemory } from "./bundle-memory.ts";

export interface AgentGraphOptions {
  bundle: Bundle;
  driver: PluginDriver;
  env: Env;
  checkpointer?: BaseCheckpointSaver;
  store: BaseStore;
  log?: HookLogger;
  /** Assistant id used when a run's config carries none (default: `[agent].name`). */
  assistantId?: string;
  /**
   * The server's sandboxes (durable scope mapping). Without it, a graph with `[sandbox]`
   * keeps the mapping in an in-memory database of its own (tests, embedding).
   */
  sandboxes?: SandboxManager;
  /** The working directory of sandbox commands, told to the model. */
  sandboxWorkdir?: string;
  /**
   * Where MCP tool sets come from: a host's pool (./mcp-pool.ts) keeps connections across
   * `dev` reloads; without it the graph connects its own and closes them with itself.
   */
  mcp?: McpConnector;
}

export interface AgentGraph {
  /** The compiled LangGraph graph (stream with `subgraphs: true` to see subagents). */
  graph: ReturnType<typeof createAgent>["graph"];
  /** Problems found at start (unreachable MCP servers, approvals matching nothing, ...). */
  warnings: string[];
  close(): Promise<void>;
}

/** The file tools of `deepagents`; `execute` is ours (./sandbox/execute-tool.ts: per-call timeout). */
const FILE_TOOLS: FsToolName[] = ["ls", "read_file", "write_file", "edit_file", "glob", "grep"];

/**
 * Builds the agent graph of a bundle.
 *
 * @example
 * const { graph, warnings, close } = await createAgentGraph({ bundle, driver, env, checkpointer, store, log });
 * for await (const chunk of await graph.stream({ messages: [{ role: "user", content: "hi" }] },
 *   { configurable: { thread_id: "t1" }, streamMode: "messages", subgraphs: true })) { ... }
 */
export async function createAgentGraph(opts: AgentGraphOptions): Promise<AgentGraph> {
  const { bundle, driver, env, store } = opts;
  const config = bundle.config;
  const defaultAssistantId = opts.assistantId ?? config.agent.name;
  const warnings: string[] = [];
  const warn = (msg: string) => {
    warnings.push(msg);
    opts.log?.warn(msg);
  };

  const hasSubagents = config.subagents.length > 0;
  const sandboxOn = config.sandbox.provider !== "none";
  const fileTools = sandboxOn ? [...FILE_TOOLS, "execute"] : FILE_TOOLS;
  const builtins = ["write_todos", ...fileTools, ...(hasSubagents ? ["task"] : [])];
  const reserved = new Set(builtins);

  const toolSets: McpToolSet[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    await Promise.allSettled([...toolSets.map((t) => t.close()), ...cleanups.splice(0).reverse().map((c) => c())]);
  };
  const mcp: McpConnector = opts.mcp ?? { connect: connectMcpServers };
  let sandboxBackend: PluginSandboxBackend | null = null;
  try {
    if (sandboxOn) {
      let manager = opts.sandboxes;
      if (!manager) {
        const { inMemorySandboxManager } = await import("./sandbox/in-memory.ts");
        const own = await inMemorySandboxManager({ driver, env, settings: () => config.sandbox, log: opts.log });
        cleanups.push(own.close);
        manager = own.manager;
      }
      sandboxBackend = new PluginSandboxBackend({
        manager,
        settings: () => config.sandbox,
        defaultAssistantId,
        seedFiles: skillSeedFiles(bundle.files),
      });
    }
    const fallback = sandboxBackend ?? new StateBackend();
    const sandboxTools = (skills: boolean): AgentMiddleware[] =>
      sandboxBackend
        ? [
          executeMiddleware({
            backend: sandboxBackend,
            workdir: opts.sandboxWorkdir,
            skills,
          }) as unknown as AgentMiddleware,
        ]
        : [];
    const mainMcp = await mcp.connect({ servers: config.mcp, env, file: "mcp.json", reserved });
    toolSets.push(mainMcp);
    mainMcp.warnings.forEach(warn);
    // /memories/ and the preloaded instructions: the memory plugin's store under this bundle's
    // read-only files (instructions and skills are the revision's own, never copied to the store).
    const overlay = bundleMemory(await memoryStore({ driver, env, store, assistantId: defaultAssistantId }), bundle);
    overlay.warnings.forEach(warn);
    const memory = overlay.store;
    const backend = createMemoryBackend({
      store: memory,
      defaultAssistantId,
      subagents: config.subagents.map((s) => s.name),
      fallback,
    });
    const common = { store: memory, bundle, defaultAssistantId };

    const subagents: SubAgent[] = [];
    for (const sub of config.subagents) {
      let tools = mainMcp.tools;
      let origins = mainMcp.origins;
      if (sub.mcp) {
        const own = await mcp.connect({ servers: sub.mcp, env, file: `subagents/${sub.name}/mcp.json`, reserved });
        toolSets.push(own);
        own.warnings.forEach(warn);
        tools = own.tools;
        origins = own.origins;
      }
      const subBuiltins = fileTools.map((name) => ({ name }));
      // Inherited tools keep their gates: a subagent must not be a way around an approval.
      const gated = resolveApprovals(
        sub.approvals ?? config.approvals,
        [...subBuiltins, ...origins],
        sub.approvals ? warn : () => {},
      );
      const middleware: AgentMiddleware[] = [
        contextRedactionMiddleware(),
        modelSelectionMiddleware({ model: sub.model ?? config.agent.model, driver, env }),
        subagentInstructionsMiddleware({ ...common, name: sub.name }),
        createFilesystemMiddleware({ backend, permissions: subagentPermissions(sub.name), tools: FILE_TOOLS }),
        ...sandboxTools(sub.skills.length > 0),
        createSummarizationMiddleware({ backend }),
        createPatchToolCallsMiddleware(),
        ...(sub.skills.length > 0
          ? [createSkillsMiddleware({ backend, sources: [`/memories/subagents/${sub.name}/skills/`] })]
          : []),
        ...unavailableNote(sub.mcp ? toolSets.at(-1)!.unavailable : mainMcp.unavailable),
        ...(gated.size > 0 ? [approvalMiddleware(gated)] : []),
        toolErrorsMiddleware(),
      ] as AgentMiddleware[];
      subagents.push({
        name: sub.name,
        description: sub.description,
        model: new PendingChatModel({}),
        tools: tools as never,
        middleware,
      });
    }

    const mainOrigins: ToolOrigin[] = [...builtins.map((name) => ({ name })), ...mainMcp.origins];
    const gatedMain = resolveApprovals(config.approvals, mainOrigins, warn);
    const middleware = [
      contextRedactionMiddleware(),
      modelSelectionMiddleware({ model: config.agent.model, driver, env }),
      mainInstructionsMiddleware(common),
      todoListMiddleware(),
      createSkillsMiddleware({ backend, sources: ["/memories/skills/"] }),
      createFilesystemMiddleware({ backend, permissions: mainAgentPermissions(), tools: FILE_TOOLS }),
      ...sandboxTools(config.skills.length > 0),
      ...(hasSubagents
        ? [
          createSubAgentMiddleware({
            defaultModel: new PendingChatModel({}),
            defaultTools: [],
            subagents,
            generalPurposeAgent: false,
          }),
        ]
        : []),
      createSummarizationMiddleware({ backend }),
      createPatchToolCallsMiddleware(),
      ...unavailableNote(mainMcp.unavailable),
      ...(gatedMain.size > 0 ? [approvalMiddleware(gatedMain)] : []),
      toolErrorsMiddleware(),
    ] as AgentMiddleware[];

    const agent = createAgent({
      model: new PendingChatModel({}),
      tools: mainMcp.tools as StructuredToolInterface[] as never,
      middleware: middleware as never,
      checkpointer: opts.checkpointer,
      store,
      name: config.agent.name,
    });
    return { graph: agent.graph, warnings, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** Tells the model, on every call, which MCP servers could not be reached at start. */
function unavailableNote(unavailable: McpToolSet["unavailable"]): AgentMiddleware[] {
  if (unavailable.length === 0) return [];
  const text = [
    "## Unavailable tools",
    ...unavailable.map((u) =>
      `- The MCP server "${u.server}" could not be reached (${u.reason}); its tools cannot be used in this conversation. Say so if the user needs them.`
    ),
  ].join("\n");
  return [createMiddleware({
    name: "AgentcliUnavailableTools",
    wrapModelCall: (request, handler) =>
      handler({ ...request, systemMessage: request.systemMessage.concat(new SystemMessage(text)) }),
  }) as unknown as AgentMiddleware];
}
