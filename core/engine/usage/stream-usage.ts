/**
 * A run's model calls read from its own stream, without a LangChain callback handler (any
 * handler makes LangChain run its callback machinery on every runnable of the run: about a
 * third more CPU per run). The executor streams LangGraph's `updates` mode with subgraphs
 * for it (../executor/run-graph.ts; with traces kept, the stream-built trace hands it each
 * task's writes from the `tasks` mode instead, ../tracing/stream-trace.ts), so each AI
 * message a node writes reaches here: the main
 * graph's, and its nested graphs' (a deepagents subagent run by the `task` tool is one).
 * Each message is one model call: its `usage_metadata` (or the provider's fields,
 * ./usage-of.ts), its `response_metadata` naming the model; counted from its text when the
 * provider reported no usage (the input from the messages the namespace wrote before it).
 *
 * What this does not see: a model call whose message no graph writes to its state (a tool
 * that calls a model itself and returns a string). Those are counted when the run has a
 * callback handler anyway (the OpenTelemetry export, LangSmith, the `messages` or
 * `events` stream mode): then ./recorder.ts counts every call instead.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { type ModelCall, PROVIDER_ALIASES, textLength } from "./recorder.ts";
import { usageOf } from "./usage-of.ts";

/** Characters of text per token, for a call whose provider reported no usage. */
const CHARS_PER_TOKEN = 4;

/** Reads a run's `updates` chunks and hands each new AI message's call to `onCall`. */
export class StreamUsageReader {
  readonly #onCall: (call: ModelCall) => unknown;
  /** Ids of the AI messages counted (a node that writes the whole list again counts nothing twice). */
  readonly #seen = new Set<string>();
  /** Characters of the messages each namespace wrote so far: the input of an estimated call. */
  readonly #chars = new Map<string, number>();

  constructor(onCall: (call: ModelCall) => unknown) {
    this.#onCall = onCall;
  }

  /** One `updates` chunk (`{ node: update }`) of namespace `ns` ([] for the run's own graph). */
  observe(ns: readonly string[], payload: unknown): void {
    if (!payload || typeof payload !== "object") return;
    const key = ns.join("|");
    for (const [node, update] of Object.entries(payload)) {
      if (node === "__interrupt__") continue;
      for (const m of messagesIn(update)) this.#message(key, m);
    }
  }

  #message(ns: string, m: BaseMessage): void {
    const chars = this.#chars.get(ns) ?? 0;
    const own = textLength(m.content);
    this.#chars.set(ns, chars + own);
    if (!AIMessage.isInstance(m)) return;
    if (m.id) {
      if (this.#seen.has(m.id)) return;
      this.#seen.add(m.id);
    }
    const meta = (m.response_metadata ?? {}) as Record<string, unknown>;
    const model = str(meta.model_name) ?? str(meta.model) ?? "unknown";
    const named = str(meta.agentcli_model_provider) ?? str(meta.model_provider);
    const provider = named ? PROVIDER_ALIASES[named] ?? named : "unknown";
    const reported = usageOf(m);
    if (reported) {
      this.#onCall({ provider, model, usage: reported, estimated: false });
      return;
    }
    const input = Math.ceil(chars / CHARS_PER_TOKEN);
    const output = Math.ceil(own / CHARS_PER_TOKEN);
    this.#onCall({
      provider,
      model,
      usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
      estimated: true,
    });
  }
}

/**
 * The messages in what a node wrote (an `updates` value, or a `tasks` result with its
 * `$writes`): a message, a list of them, or objects holding them, three levels down at most.
 * Shared with the stream-built trace (../tracing/stream-trace.ts).
 */
export function messagesIn(value: unknown, depth = 0): BaseMessage[] {
  if (!value || typeof value !== "object" || depth > 3) return [];
  if (isMessage(value)) return [value];
  const values = Array.isArray(value) ? value : Object.values(value);
  return values.flatMap((v) => messagesIn(v, depth + 1));
}

function isMessage(v: unknown): v is BaseMessage {
  return typeof (v as { _getType?: unknown })?._getType === "function" && "content" in (v as object);
}

const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
