/**
 * The LangChain callback handler that sees a run's model calls (the subagents' too: callbacks
 * go down to every nested call of the graph): at each call's end, its token usage as the
 * provider reported it (./usage-of.ts), or counted from its text when the provider reported
 * none (about four characters a token; a streamed call's text is its final generation's, so
 * no handler runs per token), handed to `onCall`. Attached only to a run that has a handler
 * anyway (else its usage is read from its stream, ./stream-usage.ts: any handler costs
 * LangChain's machinery on every runnable); with local traces on, the run's trace recorder
 * (../tracing/span-recorder.ts) calls it instead of LangChain: one handler per run.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import { type TokenUsage, usageOf } from "./usage-of.ts";

/** One model call as the handler saw it. */
export interface ModelCall {
  provider: string;
  model: string;
  usage: TokenUsage;
  /** Counted from the text: the provider reported no usage. */
  estimated: boolean;
}

/** LangChain's `ls_provider` names where they differ from the model plugins' prefixes. */
export const PROVIDER_ALIASES: Record<string, string> = {
  mistral: "mistralai",
  azure: "azure_openai",
  google_vertexai: "google_vertexai",
  google_genai: "google_genai",
  "google-genai": "google_genai",
  "google-vertexai": "google_vertexai",
};

/** Characters of text per token, for a call whose provider reported no usage. */
const CHARS_PER_TOKEN = 4;

interface Pending {
  provider: string;
  model: string;
  inputChars: number;
}

/**
 * Hands each finished model call's usage to `onCall`, and is awaited: the call returns once
 * its usage is recorded, so a run over a budget stops at its next model call's start.
 */
export class UsageCallbacks extends BaseCallbackHandler {
  name = "agentcli-usage";
  override awaitHandlers = true;
  readonly #pending = new Map<string, Pending>();
  readonly #onCall: (call: ModelCall) => Promise<void>;
  readonly #beforeCall: () => void;

  /** `beforeCall`: at each model call's start (the meter stops a run there once over a budget). */
  constructor(onCall: (call: ModelCall) => Promise<void>, beforeCall: () => void = () => {}) {
    super();
    this.#onCall = onCall;
    this.#beforeCall = beforeCall;
  }

  override handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    _parentRunId?: string,
    extra?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#beforeCall();
    const chars = messages.flat().reduce((n, m) => n + textLength(m.content), 0);
    this.#pending.set(runId, { ...identify({ llm, extra, metadata, runName }), inputChars: chars });
  }

  override handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    _parentRunId?: string,
    extra?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#beforeCall();
    const chars = prompts.reduce((n, p) => n + p.length, 0);
    this.#pending.set(runId, { ...identify({ llm, extra, metadata, runName }), inputChars: chars });
  }

  override async handleLLMEnd(output: LLMResult, runId: string): Promise<void> {
    const p = this.#pending.get(runId);
    if (!p) return;
    this.#pending.delete(runId);
    const reported = usageOf(output);
    if (reported) {
      await this.#onCall({ provider: p.provider, model: p.model, usage: reported, estimated: false });
      return;
    }
    const text = output.generations.flat().reduce((n, g) => n + g.text.length, 0);
    const input = Math.ceil(p.inputChars / CHARS_PER_TOKEN);
    const out = Math.ceil(text / CHARS_PER_TOKEN);
    await this.#onCall({
      provider: p.provider,
      model: p.model,
      usage: { input_tokens: input, output_tokens: out, total_tokens: input + out },
      estimated: true,
    });
  }

  override handleLLMError(_err: unknown, runId: string): void {
    this.#pending.delete(runId);
  }
}

/** The provider (the model plugin's prefix when agentcli built the model) and model of a call. */
function identify(
  o: { llm: Serialized; extra?: Record<string, unknown>; metadata?: Record<string, unknown>; runName?: string },
): { provider: string; model: string } {
  const params = (o.extra?.invocation_params ?? {}) as Record<string, unknown>;
  const model = String(params.model ?? params.model_name ?? o.metadata?.ls_model_name ?? o.runName ?? "unknown");
  const ls = typeof o.metadata?.ls_provider === "string" ? o.metadata.ls_provider : undefined;
  const own = o.metadata?.agentcli_model_provider;
  const provider = typeof own === "string"
    ? own
    : ls
    ? PROVIDER_ALIASES[ls] ?? ls
    : String(o.llm.id?.at(-1) ?? "unknown");
  return { provider, model };
}

/** The characters of a message's text (its text parts). */
export function textLength(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (Array.isArray(content)) {
    return content.reduce((n: number, part) => n + (typeof part?.text === "string" ? part.text.length : 0), 0);
  }
  return 0;
}
