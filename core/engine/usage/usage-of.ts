/**
 * A model call's token usage, read from what the model returned, whatever its shape: a
 * LangChain message (`usage_metadata`, the standard field every chat model integration fills,
 * with `input_token_details.cache_read` and `output_token_details.reasoning`), the provider's
 * raw usage in `response_metadata` (OpenAI's `prompt_tokens`/`completion_tokens` with their
 * details, Anthropic's `input_tokens`/`cache_read_input_tokens`, LangChain's older
 * `tokenUsage`), a message serialized by LangChain (`{ lc, kwargs }`) or as the Agent API's
 * dict, or a chat generation (`{ message }`). Undefined when none of them says.
 *
 * @example
 * usageOf(aiMessage); // { input_tokens: 10, output_tokens: 5, total_tokens: 15 }
 */

/** Tokens one model call used (`cached_input_tokens` and `reasoning_tokens` when the provider reports them). */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Input tokens served from the provider's prompt cache (part of `input_tokens`). */
  cached_input_tokens?: number;
  /** Output tokens spent on reasoning (part of `output_tokens`). */
  reasoning_tokens?: number;
}

type Rec = Record<string, unknown>;

const rec = (v: unknown): Rec | undefined => (v && typeof v === "object" ? (v as Rec) : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** The token usage a model's message (or generation) reports, or undefined. */
export function usageOf(message: unknown): TokenUsage | undefined {
  const m = rec(message);
  if (!m) return undefined;
  // A chat generation, or a message serialized by LangChain.
  if (rec(m.message)) return usageOf(m.message);
  if (m.lc !== undefined && rec(m.kwargs)) return usageOf(m.kwargs);
  const standard = fromUsageMetadata(rec(m.usage_metadata));
  if (standard) return standard;
  const meta = rec(m.response_metadata);
  return fromRaw(rec(meta?.usage)) ?? fromRaw(rec(meta?.tokenUsage)) ?? fromRaw(rec(meta?.token_usage));
}

/** LangChain's `usage_metadata`. */
function fromUsageMetadata(u: Rec | undefined): TokenUsage | undefined {
  const input = num(u?.input_tokens);
  const output = num(u?.output_tokens);
  if (!u || (input === undefined && output === undefined)) return undefined;
  return withDetails({
    input: input ?? 0,
    output: output ?? 0,
    total: num(u.total_tokens),
    cached: num(rec(u.input_token_details)?.cache_read),
    reasoning: num(rec(u.output_token_details)?.reasoning),
  });
}

/** A provider's raw usage: OpenAI's, Anthropic's, or LangChain's older `tokenUsage`. */
function fromRaw(u: Rec | undefined): TokenUsage | undefined {
  if (!u) return undefined;
  const input = num(u.prompt_tokens) ?? num(u.promptTokens) ?? num(u.input_tokens);
  const output = num(u.completion_tokens) ?? num(u.completionTokens) ?? num(u.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  // Anthropic counts cache reads beside `input_tokens`; OpenAI inside `prompt_tokens`.
  const anthropicCached = num(u.cache_read_input_tokens);
  return withDetails({
    input: (input ?? 0) + (anthropicCached ?? 0) + (num(u.cache_creation_input_tokens) ?? 0),
    output: output ?? 0,
    total: num(u.total_tokens) ?? num(u.totalTokens),
    cached: num(rec(u.prompt_tokens_details)?.cached_tokens) ?? anthropicCached,
    reasoning: num(rec(u.completion_tokens_details)?.reasoning_tokens),
  });
}

function withDetails(
  u: { input: number; output: number; total: number | undefined; cached?: number; reasoning?: number },
): TokenUsage {
  return {
    input_tokens: u.input,
    output_tokens: u.output,
    total_tokens: u.total ?? u.input + u.output,
    ...(u.cached !== undefined ? { cached_input_tokens: u.cached } : {}),
    ...(u.reasoning !== undefined ? { reasoning_tokens: u.reasoning } : {}),
  };
}
