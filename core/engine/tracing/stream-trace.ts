/**
 * A run's local trace built from its own stream, without a LangChain callback handler (any
 * handler makes LangChain run its callback machinery on every runnable of the run: issue
 * 35's overhead). The executor streams LangGraph's `tasks` mode with subgraphs for it
 * (../executor/run-graph.ts) when the run has no handler anyway. Each task (a node's run) is
 * a `chain` span from its start to its result; within it:
 * - a task whose input carries a tool call (createAgent and deepagents send each tool call
 *   as its own task) is that tool call's span (`subagent` for deepagents' `task` tool), its
 *   ToolMessage its output (status "error": the span failed);
 * - a task of the agent's model node (`model_request`, or `agent` of the older ReAct agent)
 *   is a model call's span from its start (so a call in flight shows as running);
 * - any other AI message or ToolMessage a task writes is a call's span with the task's timing
 *   (a tool call's input: the args of the AI message's matching tool call).
 * A nested graph's tasks (namespace `node:task_id`) go under the span of the task with that
 * id: a subagent's calls under its `task` tool call. The run's usage is read from the same
 * chunks (one reader: the `updates` stream is not read then).
 *
 * What it does not see, unlike the handler (./span-recorder.ts, used when the run has a
 * handler anyway): a model call inside a tool that no graph writes to state, and the calls of
 * a graph that makes several per node (they share their node's timing).
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { Span, StoredTrace } from "../../storage/index.ts";
import { PROVIDER_ALIASES } from "../usage/recorder.ts";
import { messagesIn } from "../usage/stream-usage.ts";
import { usageOf } from "../usage/usage-of.ts";
import { subagentOf } from "./model-call.ts";
import { endTool, liveSpans, type OpenSpan, rootSpan, storedSpans, type TracedRun, type TraceEnd } from "./spans.ts";

/** The model nodes of LangChain's agents (createAgent's, then createReactAgent's). */
const MODEL_NODES = new Set(["model_request", "agent"]);

interface TaskSpans {
  chain: OpenSpan;
  /** The task's own call (a tool call it was sent, its model call), while open. */
  call: OpenSpan | null;
}

interface ToolCall {
  id?: string;
  name: string;
  args: unknown;
}

/** Where the usage of the run's calls goes (the run's stream reader, ../usage/stream-usage.ts). */
export type UsageTap = { observe(ns: readonly string[], payload: unknown): void };

export class StreamTrace {
  readonly #root: OpenSpan;
  readonly #spans: OpenSpan[] = [];
  readonly #tasks = new Map<string, TaskSpans>();
  /** Tool calls the AI messages asked for, by id: a ToolMessage's input. */
  readonly #toolCalls = new Map<string, ToolCall>();
  readonly #usage: UsageTap | null;
  /** Ids of the messages made spans of (a node that writes the whole list again adds none). */
  readonly #seen = new Set<string>();
  /** A tool's metadata by name (an MCP tool's server), from the graph's tool nodes. */
  readonly #toolMeta: (name: string) => Record<string, unknown> | undefined;

  constructor(
    run: TracedRun,
    opts: { usage?: UsageTap | null; toolMeta?: (name: string) => Record<string, unknown> | undefined },
  ) {
    this.#root = rootSpan(run);
    this.#root.attributes.trace_from = "stream";
    this.#spans.push(this.#root);
    this.#usage = opts.usage ?? null;
    this.#toolMeta = opts.toolMeta ?? (() => undefined);
  }

  /** The spans so far, as the trace endpoint answers them. */
  live(): Span[] {
    return liveSpans(this.#spans);
  }

  /** Ends the root span and answers every span ready to store (a call still open failed with the run). */
  stored(end: TraceEnd): StoredTrace {
    const why = end.error ? `the run ended (${end.status}): ${end.error}` : undefined;
    return storedSpans(this.#spans, end, why);
  }

  /** One chunk of the run's stream: `tasks` chunks build the spans; the root `values` are the run's input and output. */
  observe(ns: readonly string[], mode: string, payload: unknown): void {
    if (mode === "values") {
      if (ns.length) return;
      if (this.#root.input === null) this.#root.input = payload;
      this.#root.output = payload;
      return;
    }
    if (mode !== "tasks" || !payload || typeof payload !== "object") return;
    if ("result" in payload) this.#result(ns, payload as TaskResult);
    else this.#start(ns, payload as TaskStart);
  }

  #parentOf(ns: readonly string[]): string {
    const last = ns.at(-1);
    if (!last) return this.#root.id;
    const task = this.#tasks.get(last.slice(last.lastIndexOf(":") + 1));
    return task ? (task.call ?? task.chain).id : this.#root.id;
  }

  #open(span: Pick<OpenSpan, "id" | "parent" | "kind" | "name" | "input" | "attributes">): OpenSpan {
    const opened: OpenSpan = { ...span, start: Date.now(), end: null, failed: false, output: null };
    this.#spans.push(opened);
    return opened;
  }

  #start(ns: readonly string[], task: TaskStart): void {
    const attributes: Record<string, unknown> = { node: task.name };
    const step = task.metadata?.langgraph_step;
    if (typeof step === "number") attributes.step = step;
    const chain = this.#open({
      id: task.id,
      parent: this.#parentOf(ns),
      kind: "chain",
      name: task.name,
      input: null,
      attributes,
    });
    const input = task.input as { lg_tool_call?: ToolCall; messages?: unknown } | null;
    let call: OpenSpan | null = null;
    if (input && typeof input === "object" && input.lg_tool_call) {
      call = this.#openTool(chain, input.lg_tool_call, chain.start);
    } else if (MODEL_NODES.has(task.name)) {
      const messages = input && typeof input === "object" && "messages" in input ? input.messages : input;
      call = this.#open({
        id: `${task.id}:model`,
        parent: chain.id,
        kind: "model",
        name: "model",
        input: messages,
        attributes: { node: task.name },
      });
    }
    this.#tasks.set(task.id, { chain, call });
  }

  #openTool(chain: OpenSpan, tc: ToolCall, start: number): OpenSpan {
    const attributes: Record<string, unknown> = { tool: tc.name };
    if (tc.id) attributes.tool_call_id = tc.id;
    const meta = this.#toolMeta(tc.name);
    if (typeof meta?.mcp_server === "string") attributes.mcp_server = meta.mcp_server;
    if (typeof meta?.mcp_tool === "string") attributes.mcp_tool = meta.mcp_tool;
    const subagent = subagentOf(tc.name, tc.args);
    if (subagent) attributes.subagent = subagent;
    const span = this.#open({
      id: tc.id ? `${chain.id}:${tc.id}` : `${chain.id}:tool`,
      parent: chain.id,
      kind: tc.name === "task" ? "subagent" : "tool",
      name: subagent ?? tc.name,
      input: tc.args,
      attributes,
    });
    span.start = start;
    return span;
  }

  #result(ns: readonly string[], task: TaskResult): void {
    const spans = this.#tasks.get(task.id);
    if (!spans) return;
    this.#tasks.delete(task.id);
    const now = Date.now();
    const { chain } = spans;
    this.#usage?.observe(ns, { [task.name]: task.result });
    for (const m of messagesIn(task.result)) {
      if (m.id) {
        if (this.#seen.has(m.id)) continue;
        this.#seen.add(m.id);
      }
      if (AIMessage.isInstance(m)) this.#model(spans, m);
      else if (ToolMessage.isInstance(m)) this.#tool(spans, m);
    }
    const error = task.error ? `${task.error.name ?? "Error"}: ${task.error.message ?? ""}` : undefined;
    for (const s of [spans.call, chain]) {
      if (!s || s.end !== null) continue;
      s.end = now;
      if (error) {
        s.failed = true;
        s.error = error;
      }
    }
  }

  #model(spans: TaskSpans, m: AIMessage): void {
    for (const tc of m.tool_calls ?? []) if (tc.id) this.#toolCalls.set(tc.id, tc);
    const own = spans.call?.kind === "model" && spans.call.end === null;
    const s = own ? spans.call! : this.#open({
      id: `${spans.chain.id}:${m.id ?? this.#spans.length}`,
      parent: spans.chain.id,
      kind: "model",
      name: "model",
      input: null,
      attributes: { node: spans.chain.name },
    });
    if (!own) s.start = spans.chain.start;
    const meta = (m.response_metadata ?? {}) as Record<string, unknown>;
    const model = str(meta.model_name) ?? str(meta.model);
    const named = str(meta.agentcli_model_provider) ?? str(meta.model_provider) ?? str(meta.ls_provider);
    if (model) {
      s.name = model;
      s.attributes.model = model;
      s.attributes.response_model = model;
    }
    s.attributes.provider = named ? PROVIDER_ALIASES[named] ?? named : "unknown";
    const usage = usageOf(m);
    if (usage) s.usage = usage;
    s.output = m;
    s.end = Date.now();
  }

  #tool(spans: TaskSpans, m: ToolMessage): void {
    const call = spans.call;
    const own = call && call.kind !== "model" && call.end === null &&
      (!m.tool_call_id || call.attributes.tool_call_id === undefined ||
        call.attributes.tool_call_id === m.tool_call_id);
    let s = own ? call : null;
    if (!s) {
      const asked = this.#toolCalls.get(m.tool_call_id);
      s = this.#openTool(
        spans.chain,
        asked ?? { id: m.tool_call_id, name: m.name ?? "tool", args: null },
        spans.chain.start,
      );
    }
    s.output = m;
    s.end = Date.now();
    endTool(s, m);
  }
}

/** A lookup of the metadata of the tools of a graph's tool nodes (ToolNode's `tools`), by name: an MCP tool's server. */
export function toolMetaOf(graph: unknown): (name: string) => Record<string, unknown> | undefined {
  const byName = new Map<string, Record<string, unknown>>();
  const nodes = (graph as { nodes?: Record<string, { bound?: { tools?: unknown } }> } | null)?.nodes ?? {};
  for (const node of Object.values(nodes)) {
    const tools = node?.bound?.tools;
    if (!Array.isArray(tools)) continue;
    for (const t of tools as Array<{ name?: unknown; metadata?: Record<string, unknown> }>) {
      if (typeof t?.name === "string" && t.metadata) byName.set(t.name, t.metadata);
    }
  }
  return (name) => byName.get(name);
}

interface TaskStart {
  id: string;
  name: string;
  input: unknown;
  metadata?: Record<string, unknown>;
}

interface TaskResult {
  id: string;
  name: string;
  result: Record<string, unknown>;
  error?: { name?: string; message?: string } | null;
}

const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
