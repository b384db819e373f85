/**
 * The OpenTelemetry side of ./tracing.ts (loaded only when tracing is configured): a tracer
 * provider exporting over OTLP/HTTP protobuf, and per run a root span plus a LangChain
 * callback handler that turns the graph's chain, model and tool callbacks into child spans.
 */
import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import { redact, VERSION } from "../../kernel/index.ts";
import { usageOf } from "../usage/usage-of.ts";
import { responseModelOf, subagentOf } from "./model-call.ts";

/** One run's trace: callbacks for the graph, and its end. */
export interface RunTrace {
  callbacks: BaseCallbackHandler[];
  end(status: string, error?: string | null): void;
}

/** Starts runs' traces; `close` flushes what is pending. */
export interface RunTracer {
  readonly project: string;
  /** Where spans go: "otlp", "langsmith" or both ("otlp+langsmith"). */
  readonly exporter: string;
  startRun(
    run: { run_id: string; thread_id: string; assistant_id: string; graph_id: string; attempt: number },
  ): RunTrace;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createOtlpRunTracer(
  opts: { url: string; headers: Record<string, string>; serviceName: string; project: string },
): RunTracer {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": opts.serviceName,
      "service.version": VERSION,
      "agentcli.tracing_project": opts.project,
    }),
    spanProcessors: [
      new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: opts.url, headers: opts.headers }) }),
    ],
  });
  const tracer = provider.getTracer("agentcli", VERSION);
  return {
    project: opts.project,
    exporter: "otlp",
    startRun(run) {
      const root = tracer.startSpan(`run ${run.graph_id}`, {
        kind: SpanKind.INTERNAL,
        attributes: {
          "agentcli.run_id": run.run_id,
          "agentcli.thread_id": run.thread_id,
          "agentcli.assistant_id": run.assistant_id,
          "agentcli.graph_id": run.graph_id,
          "agentcli.run_attempt": run.attempt,
          "agentcli.tracing_project": opts.project,
        },
      });
      const handler = new SpanCallbacks(tracer, trace.setSpan(context.active(), root));
      return {
        callbacks: [handler],
        end(status, error) {
          handler.endAll();
          root.setAttribute("agentcli.run_status", status);
          if (error) root.setStatus({ code: SpanStatusCode.ERROR, message: redact(error) });
          root.end();
        },
      };
    },
    flush: () => provider.forceFlush(),
    close: () => provider.shutdown(),
  };
}

/**
 * LangSmith through LangChain's own tracer, with its own client (the key and endpoint from
 * the server's environment, not only the process's). Named as LangChain names it, so
 * LangChain adds no second one when the process environment enables tracing too.
 */
export async function createLangSmithRunTracer(
  opts: { apiKey: string; apiUrl?: string; project: string },
): Promise<RunTracer> {
  const [{ LangChainTracer }, { Client }] = await Promise.all([
    import("@langchain/core/tracers/tracer_langchain"),
    import("langsmith"),
  ]);
  const client = new Client({ apiKey: opts.apiKey, ...(opts.apiUrl ? { apiUrl: opts.apiUrl } : {}) });
  return {
    project: opts.project,
    exporter: "langsmith",
    startRun: () => ({ callbacks: [new LangChainTracer({ projectName: opts.project, client })], end() {} }),
    flush: () => client.awaitPendingTraceBatches(),
    close: () => client.awaitPendingTraceBatches(),
  };
}

/** Several tracers as one: every run goes to each. */
export function combineTracers(...tracers: RunTracer[]): RunTracer {
  return {
    project: tracers[0]!.project,
    exporter: tracers.map((t) => t.exporter).join("+"),
    startRun(run) {
      const traces = tracers.map((t) => t.startRun(run));
      return {
        callbacks: traces.flatMap((t) => t.callbacks),
        end: (status, error) => traces.forEach((t) => t.end(status, error)),
      };
    },
    flush: async () => void (await Promise.all(tracers.map((t) => t.flush()))),
    close: async () => void (await Promise.all(tracers.map((t) => t.close()))),
  };
}

type Tracer = ReturnType<TracerProvider["getTracer"]>;

/** LangChain callbacks as spans: each run id's span is a child of its parent run's (the root span for the graph). */
class SpanCallbacks extends BaseCallbackHandler {
  name = "agentcli-otel";
  readonly #tracer: Tracer;
  readonly #root: Context;
  readonly #spans = new Map<string, { span: Span; ctx: Context }>();

  constructor(tracer: Tracer, root: Context) {
    super();
    this.#tracer = tracer;
    this.#root = root;
  }

  /** Opens the span of a LangChain run, under its parent run's span (or the run's root). */
  #start(
    ids: { runId: string; parentRunId: string | undefined },
    span: { name: string; kind: SpanKind; attributes: Record<string, string | number | boolean> },
  ): void {
    const { runId, parentRunId } = ids;
    const { name, kind, attributes } = span;
    const parent = (parentRunId && this.#spans.get(parentRunId)?.ctx) || this.#root;
    const opened = this.#tracer.startSpan(name, { kind, attributes }, parent);
    this.#spans.set(runId, { span: opened, ctx: trace.setSpan(parent, opened) });
  }

  #end(runId: string, error?: unknown, attributes?: Record<string, number | string>): void {
    const entry = this.#spans.get(runId);
    if (!entry) return;
    this.#spans.delete(runId);
    if (attributes) entry.span.setAttributes(attributes);
    if (error !== undefined) {
      entry.span.setStatus({
        code: SpanStatusCode.ERROR,
        message: redact(error instanceof Error ? error.message : String(error)),
      });
    }
    entry.span.end();
  }

  /** Ends spans left open (a cancelled or failed run). */
  endAll(): void {
    for (const id of [...this.#spans.keys()].reverse()) this.#end(id);
  }

  // LangChain calls it with (chain, inputs, runId, parentRunId, tags, metadata, runType, runName),
  // whatever its declaration's names say.
  override handleChainStart(
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runType?: string,
    runName?: string,
  ): void {
    const attrs: Record<string, string | number> = { "agentcli.kind": runType ?? "chain" };
    if (typeof metadata?.langgraph_node === "string") attrs["agentcli.node"] = metadata.langgraph_node;
    if (typeof metadata?.langgraph_step === "number") attrs["agentcli.step"] = metadata.langgraph_step;
    this.#start({ runId, parentRunId }, { name: runName ?? "chain", kind: SpanKind.INTERNAL, attributes: attrs });
  }
  override handleChainEnd(_outputs: unknown, runId: string): void {
    this.#end(runId);
  }
  override handleChainError(err: unknown, runId: string): void {
    this.#end(runId, err);
  }

  override handleChatModelStart(
    llm: Serialized,
    _messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extra?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    const params = (extra?.invocation_params ?? {}) as Record<string, unknown>;
    const model = String(params.model ?? params.model_name ?? metadata?.ls_model_name ?? runName ?? "model");
    const provider = String(metadata?.ls_provider ?? llm.id?.at(-1) ?? "unknown");
    this.#start({ runId, parentRunId }, {
      name: `chat ${model}`,
      kind: SpanKind.CLIENT,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
      },
    });
  }
  override handleLLMStart(
    llm: Serialized,
    _prompts: string[],
    runId: string,
    parentRunId?: string,
    extra?: Record<string, unknown>,
  ): void {
    this.handleChatModelStart(llm, [], runId, parentRunId, extra);
  }
  override handleLLMEnd(output: LLMResult, runId: string): void {
    // OpenTelemetry's GenAI semantic conventions; the same counts as the local trace's `usage`.
    const usage = usageOf(output);
    const attrs: Record<string, number | string> = {};
    if (usage) {
      attrs["gen_ai.usage.input_tokens"] = usage.input_tokens;
      attrs["gen_ai.usage.output_tokens"] = usage.output_tokens;
      attrs["agentcli.usage.total_tokens"] = usage.total_tokens;
      if (usage.cached_input_tokens !== undefined) {
        attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cached_input_tokens;
      }
      if (usage.reasoning_tokens !== undefined) attrs["agentcli.usage.reasoning_tokens"] = usage.reasoning_tokens;
    }
    const model = responseModelOf(output);
    if (model) attrs["gen_ai.response.model"] = model;
    this.#end(runId, undefined, attrs);
  }
  override handleLLMError(err: unknown, runId: string): void {
    this.#end(runId, err);
  }

  override handleToolStart(
    _tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    const name = runName ?? "tool";
    const attrs: Record<string, string> = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name };
    if (toolCallId) attrs["gen_ai.tool.call.id"] = toolCallId;
    // deepagents' `task` tool runs a subagent: the span says which.
    const subagent = subagentOf(name, input);
    if (subagent) attrs["agentcli.subagent"] = subagent;
    this.#start({ runId, parentRunId }, { name: `execute_tool ${name}`, kind: SpanKind.INTERNAL, attributes: attrs });
  }
  override handleToolEnd(_output: unknown, runId: string): void {
    this.#end(runId);
  }
  override handleToolError(err: unknown, runId: string): void {
    this.#end(runId, err);
  }
}
