/**
 * The token usage a LangChain model call reports: from an AI message (`usage_metadata`, or
 * the provider's own fields in `response_metadata`; also serialized by LangChain), a generation (its message), or an
 * `LLMResult` (its generations summed, else `llmOutput.tokenUsage` / `llmOutput.usage`).
 * Undefined when nothing reports usage (then the caller counts it from the text).
 *
 * @example
 * usageOf(aiMessage); // { input_tokens: 10, output_tokens: 5, total_tokens: 15 }
 */

/** The tokens of one model call. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Input tokens read from the provider's prompt cache. */
  cached_input_tokens?: number;
  /** Output tokens spent on reasoning (counted in `output_tokens`). */
  reasoning_tokens?: number;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null;
const num = (v: unknown): number | undefined => typeof v === "number" && Number.isFinite(v) ? v : undefined;

/** The usage a message, a generation or an LLMResult reports; undefined when none does. */
export function usageOf(message: unknown): TokenUsage | undefined {
  if (!isObj(message)) return undefined;
  if (Array.isArray(message.generations)) return ofResult(message);
  if (isObj(message.message) && !("usage_metadata" in message)) return usageOf(message.message);
  // A message serialized by LangChain (`{ lc, type, id, kwargs }`), as spans and stored runs hold it.
  if (message.lc !== undefined && isObj(message.kwargs)) return usageOf(message.kwargs);
  return ofMetadata(message.usage_metadata) ?? ofProviderFields(message.response_metadata);
}

/** An LLMResult: its generations' messages summed, else what `llmOutput` reports. */
function ofResult(result: Obj): TokenUsage | undefined {
  let sum: TokenUsage | undefined;
  for (const g of (result.generations as unknown[]).flat()) {
    const u = isObj(g) ? usageOf(g.message ?? g) : undefined;
    if (u) sum = sum ? add(sum, u) : u;
  }
  if (sum) return sum;
  const out = isObj(result.llmOutput) ? result.llmOutput : undefined;
  return out ? ofProviderFields(out) : undefined;
}

/** LangChain's `usage_metadata` (input_token_details.cache_read, output_token_details.reasoning). */
function ofMetadata(m: unknown): TokenUsage | undefined {
  if (!isObj(m)) return undefined;
  const input = num(m.input_tokens);
  const output = num(m.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const inDetails = isObj(m.input_token_details) ? m.input_token_details : {};
  const outDetails = isObj(m.output_token_details) ? m.output_token_details : {};
  return make({
    input: input ?? 0,
    output: output ?? 0,
    total: num(m.total_tokens),
    cached: num(inDetails.cache_read),
    reasoning: num(outDetails.reasoning),
  });
}

/**
 * What providers put in `response_metadata` or `llmOutput`: LangChain's `tokenUsage`
 * (`promptTokens`, `completionTokens`), OpenAI's `usage` (`prompt_tokens`, ...,
 * `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`),
 * Anthropic's `usage` (`input_tokens`, `cache_read_input_tokens`), Gemini's `usageMetadata`.
 */
function ofProviderFields(m: unknown): TokenUsage | undefined {
  if (!isObj(m)) return undefined;
  const tu = isObj(m.tokenUsage) ? m.tokenUsage : isObj(m.estimatedTokenUsage) ? m.estimatedTokenUsage : null;
  if (tu && (num(tu.promptTokens) !== undefined || num(tu.completionTokens) !== undefined)) {
    return make({
      input: num(tu.promptTokens) ?? 0,
      output: num(tu.completionTokens) ?? 0,
      total: num(tu.totalTokens),
    });
  }
  const u = isObj(m.usage) ? m.usage : null;
  if (u && (num(u.prompt_tokens) !== undefined || num(u.completion_tokens) !== undefined)) {
    const pd = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
    const cd = isObj(u.completion_tokens_details) ? u.completion_tokens_details : {};
    return make({
      input: num(u.prompt_tokens) ?? 0,
      output: num(u.completion_tokens) ?? 0,
      total: num(u.total_tokens),
      cached: num(pd.cached_tokens),
      reasoning: num(cd.reasoning_tokens),
    });
  }
  if (u && (num(u.input_tokens) !== undefined || num(u.output_tokens) !== undefined)) {
    const cached = num(u.cache_read_input_tokens);
    // Anthropic counts cache reads and writes apart from `input_tokens`.
    const input = (num(u.input_tokens) ?? 0) + (cached ?? 0) + (num(u.cache_creation_input_tokens) ?? 0);
    return make({ input, output: num(u.output_tokens) ?? 0, cached });
  }
  const g = isObj(m.usageMetadata) ? m.usageMetadata : null;
  if (g && (num(g.promptTokenCount) !== undefined || num(g.candidatesTokenCount) !== undefined)) {
    return make({
      input: num(g.promptTokenCount) ?? 0,
      output: num(g.candidatesTokenCount) ?? 0,
      total: num(g.totalTokenCount),
      cached: num(g.cachedContentTokenCount),
      reasoning: num(g.thoughtsTokenCount),
    });
  }
  return undefined;
}

function make(v: { input: number; output: number; total?: number; cached?: number; reasoning?: number }): TokenUsage {
  return {
    input_tokens: v.input,
    output_tokens: v.output,
    total_tokens: v.total ?? v.input + v.output,
    ...(v.cached ? { cached_input_tokens: v.cached } : {}),
    ...(v.reasoning ? { reasoning_tokens: v.reasoning } : {}),
  };
}

function add(a: TokenUsage, b: TokenUsage): TokenUsage {
  const cached = (a.cached_input_tokens ?? 0) + (b.cached_input_tokens ?? 0);
  const reasoning = (a.reasoning_tokens ?? 0) + (b.reasoning_tokens ?? 0);
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    ...(cached ? { cached_input_tokens: cached } : {}),
    ...(reasoning ? { reasoning_tokens: reasoning } : {}),
  };
}
