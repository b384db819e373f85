/**
 * The built-in model plugins' price tables: USD per million tokens (input, output, input read
 * from the prompt cache), from the providers' public price lists of late 2025. They make each
 * usage record's estimated cost; a provider's own bill is the truth. A name prices the dated
 * names it begins (`gpt-5` prices `gpt-5-2025-08-07`). Override or add models with
 * `AGENTCLI_MODEL_PRICES` (JSON) or `AGENTCLI_MODEL_PRICES_FILE` (docs/server.md#usage).
 */
import type { ModelPrice } from "../../core/index.ts";

/** OpenAI (also Azure OpenAI's deployments of the same models). */
export const OPENAI_PRICES: Record<string, ModelPrice> = {
  "gpt-5": { input: 1.25, output: 10, cached_input: 0.125 },
  "gpt-5-mini": { input: 0.25, output: 2, cached_input: 0.025 },
  "gpt-5-nano": { input: 0.05, output: 0.4, cached_input: 0.005 },
  "gpt-4.1": { input: 2, output: 8, cached_input: 0.5 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cached_input: 0.1 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4, cached_input: 0.025 },
  "gpt-4o": { input: 2.5, output: 10, cached_input: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cached_input: 0.075 },
  "o3": { input: 2, output: 8, cached_input: 0.5 },
  "o4-mini": { input: 1.1, output: 4.4, cached_input: 0.275 },
};

/** Anthropic (cache reads at a tenth of the input price). */
export const ANTHROPIC_PRICES: Record<string, ModelPrice> = {
  "claude-opus-4-1": { input: 15, output: 75, cached_input: 1.5 },
  "claude-opus-4": { input: 15, output: 75, cached_input: 1.5 },
  "claude-sonnet-4-5": { input: 3, output: 15, cached_input: 0.3 },
  "claude-sonnet-4": { input: 3, output: 15, cached_input: 0.3 },
  "claude-3-7-sonnet": { input: 3, output: 15, cached_input: 0.3 },
  "claude-haiku-4-5": { input: 1, output: 5, cached_input: 0.1 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cached_input: 0.08 },
};

/** Google Gemini (Gemini API and Vertex AI; prompts up to 200k tokens). */
export const GEMINI_PRICES: Record<string, ModelPrice> = {
  "gemini-2.5-pro": { input: 1.25, output: 10, cached_input: 0.31 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5, cached_input: 0.075 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cached_input: 0.025 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4, cached_input: 0.025 },
};

/** Groq. */
export const GROQ_PRICES: Record<string, ModelPrice> = {
  "llama-3.3-70b-versatile": { input: 0.59, output: 0.79 },
  "llama-3.1-8b-instant": { input: 0.05, output: 0.08 },
  "openai/gpt-oss-120b": { input: 0.15, output: 0.75 },
  "openai/gpt-oss-20b": { input: 0.1, output: 0.5 },
};

/** Mistral AI. */
export const MISTRAL_PRICES: Record<string, ModelPrice> = {
  "mistral-large-latest": { input: 2, output: 6 },
  "mistral-medium-latest": { input: 0.4, output: 2 },
  "mistral-small-latest": { input: 0.1, output: 0.3 },
  "codestral-latest": { input: 0.3, output: 0.9 },
};

/** Ollama runs models locally: no per-token price. */
export const OLLAMA_PRICES: Record<string, ModelPrice> = { "*": { input: 0, output: 0 } };
