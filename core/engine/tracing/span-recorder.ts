/**
 * A run's trace kept locally: a LangChain callback handler that notes each model call, tool
 * call (`task` to a subagent, with the subagent's own calls under it), and graph step as a
 * span in memory, with references to its input and output. Nothing is serialized while the
 * run goes: at its end, {@link SpanRecorder.stored} turns the spans into JSON once (each
 * input and output cut at {@link MAX_FIELD_CHARS}, {@link MAX_RUN_CHARS} in all, everything redacted) for the one
 * statement that records the run's end (../executor/run-end.ts).
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import type { Span, StoredTrace } from "../../storage/index.ts";
import type { UsageCallbacks } from "../usage/recorder.ts";
import { usageOf } from "../usage/usage-of.ts";
import { responseModelOf, subagentOf } from "./model-call.ts";
import {
  endTool,
  liveSpans,
  type OpenSpan,
  rootSpan,
  storedSpans,
  type TracedRun,
  type TraceEnd,
  type TraceRecorder,
} from "./spans.ts";

export { MAX_FIELD_CHARS, MAX_RUN_CHARS } from "./spans.ts";
export type { TracedRun, TraceEnd } from "./spans.ts";

/** LangGraph's tag of its internal runnables (channel writes, branches): not spans of their own. */
const HIDDEN = "langsmith:hidden";

/** Collects one run's spans (see the module's comment). */
export class SpanRecorder extends BaseCallbackHandler implements TraceRecorder {
  name = "agentcli-local-trace";
  readonly #root: OpenSpan;
  readonly #spans: OpenSpan[] = [];
  /** LangChain run id -> its span. */
  readonly #byRun = new Map<string, OpenSpan>();
  /** A hidden runnable's run id -> the span its children go under. */
  readonly #hidden = new Map<string, string>();
  /** The run's usage handler, fed from here: one handler attached instead of two (LangChain's cost is per handler). */
  readonly #usage: UsageCallbacks | null;

  constructor(run: TracedRun, usage?: UsageCallbacks | null) {
    // Awaited, so every span is noted before the run's end collects them.
    super({ _awaitHandler: true });
    this.#usage = usage ?? null;
    this.#root = rootSpan(run);
    this.#root.attributes.trace_from = "callbacks";
    this.#spans.push(this.#root);
    this.#byRun.set(run.run_id, this.#root);
  }

  /** The spans so far, as the trace endpoint answers them (calls in flight are `running`). */
  live(): Span[] {
    return liveSpans(this.#spans);
  }

  /** Ends the root span and answers every span ready to store (a call still open ends with the run, `error`). */
  stored(end: TraceEnd): StoredTrace {
    return storedSpans(this.#spans, end);
  }

  #parentOf(parentRunId: string | undefined): string {
    if (!parentRunId) return this.#root.id;
    return this.#byRun.get(parentRunId)?.id ?? this.#hidden.get(parentRunId) ?? this.#root.id;
  }

  #open(runId: string, span: Pick<OpenSpan, "kind" | "name" | "input" | "attributes"> & { parentRunId?: string }) {
    const { parentRunId, ...rest } = span;
    const opened: OpenSpan = {
      ...rest,
      id: runId,
      parent: this.#parentOf(parentRunId),
      start: Date.now(),
      end: null,
      failed: false,
      output: null,
    };
    this.#spans.push(opened);
    this.#byRun.set(runId, opened);
  }

  #close(runId: string, o: { output?: unknown; error?: unknown }): OpenSpan | undefined {
    const s = this.#byRun.get(runId);
    if (!s || s.end !== null) return undefined;
    s.end = Date.now();
    if (o.output !== undefined) s.output = o.output;
    if (o.error !== undefined) {
      s.failed = true;
      s.error = o.error instanceof Error ? `${o.error.name}: ${o.error.message}` : String(o.error);
    }
    return s;
  }

  // LangChain calls it with (chain, inputs, runId, parentRunId, tags, metadata, runType, runName),
  // whatever its declaration's names say.
  override handleChainStart(
    _chain: Serialized,
    inputs: unknown,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    // The graph's own run has the run's id: it is the root span.
    if (runId === this.#root.id) {
      this.#root.input = inputs;
      return;
    }
    if (tags?.includes(HIDDEN)) {
      this.#hidden.set(runId, this.#parentOf(parentRunId));
      return;
    }
    const attributes: Record<string, unknown> = {};
    if (typeof metadata?.langgraph_node === "string") attributes.node = metadata.langgraph_node;
    if (typeof metadata?.langgraph_step === "number") attributes.step = metadata.langgraph_step;
    // A step's input and output are the graph's state: the thread's checkpoints have it, the span does not.
    this.#open(runId, { parentRunId, kind: "chain", name: runName ?? "chain", input: null, attributes });
  }
  override handleChainEnd(outputs: unknown, runId: string): void {
    if (runId === this.#root.id) this.#root.output = outputs;
    else this.#close(runId, {});
    this.#hidden.delete(runId);
  }
  override handleChainError(err: unknown, runId: string): void {
    if (runId === this.#root.id) this.#root.error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    else this.#close(runId, { error: err });
    this.#hidden.delete(runId);
  }

  override handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extra?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#usage?.handleChatModelStart(llm, messages, runId, parentRunId, extra, _tags, metadata, runName);
    this.#openModel(llm, messages, { runId, parentRunId, extra, metadata, runName });
  }
  #openModel(
    llm: Serialized,
    messages: BaseMessage[][],
    o: {
      runId: string;
      parentRunId?: string;
      extra?: Record<string, unknown>;
      metadata?: Record<string, unknown>;
      runName?: string;
    },
  ): void {
    const { runId, parentRunId, extra, metadata, runName } = o;
    const params = (extra?.invocation_params ?? {}) as Record<string, unknown>;
    const model = String(params.model ?? params.model_name ?? metadata?.ls_model_name ?? runName ?? "model");
    const attributes: Record<string, unknown> = {
      model,
      provider: String(metadata?.ls_provider ?? llm.id?.at(-1) ?? "unknown"),
    };
    if (typeof metadata?.langgraph_node === "string") attributes.node = metadata.langgraph_node;
    if (typeof params.temperature === "number") attributes.temperature = params.temperature;
    this.#open(runId, {
      parentRunId,
      kind: "model",
      name: model,
      input: messages.length === 1 ? messages[0] : messages,
      attributes,
    });
  }
  override handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extra?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#usage?.handleLLMStart(llm, prompts, runId, parentRunId, extra, tags, metadata, runName);
    this.#openModel(llm, [], { runId, parentRunId, extra });
    const s = this.#byRun.get(runId);
    if (s) s.input = prompts;
  }
  override handleLLMEnd(output: LLMResult, runId: string): Promise<void> | void {
    const recorded = this.#usage?.handleLLMEnd(output, runId);
    this.#endModel(output, runId);
    return recorded;
  }
  #endModel(output: LLMResult, runId: string): void {
    const first = output.generations[0]?.[0] as { message?: unknown; text?: string } | undefined;
    const s = this.#close(runId, { output: first?.message ?? first?.text ?? null });
    if (!s) return;
    const usage = usageOf(output);
    if (usage) s.usage = usage;
    const responseModel = responseModelOf(output);
    if (responseModel) s.attributes.response_model = responseModel;
  }
  override handleLLMError(err: unknown, runId: string): void {
    this.#usage?.handleLLMError(err, runId);
    this.#close(runId, { error: err });
  }

  override handleToolStart(
    _tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    const name = runName ?? "tool";
    const args = parseJson(input);
    const attributes: Record<string, unknown> = { tool: name };
    if (toolCallId) attributes.tool_call_id = toolCallId;
    if (typeof metadata?.mcp_server === "string") attributes.mcp_server = metadata.mcp_server;
    if (typeof metadata?.mcp_tool === "string") attributes.mcp_tool = metadata.mcp_tool;
    // deepagents' `task` tool runs a subagent: its span is the subagent's, its calls under it.
    const subagent = subagentOf(name, args);
    if (subagent) attributes.subagent = subagent;
    this.#open(runId, {
      parentRunId,
      kind: name === "task" ? "subagent" : "tool",
      name: subagent ?? name,
      input: args,
      attributes,
    });
  }
  override handleToolEnd(output: unknown, runId: string): void {
    const s = this.#close(runId, { output });
    if (!s) return;
    endTool(s, output);
  }
  override handleToolError(err: unknown, runId: string): void {
    this.#close(runId, { error: err });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
