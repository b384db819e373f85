/**
 * Model prices, for each usage record's estimated cost: the model plugins' tables (USD per
 * million tokens, by model name), under the deployment's overrides (`AGENTCLI_MODEL_PRICES`,
 * JSON, or `AGENTCLI_MODEL_PRICES_FILE`, a JSON file: `{"openai:gpt-5": {"input": 1.25,
 * "output": 10, "cached_input": 0.125}}`, keys `<provider>:<model>` or a bare model name).
 *
 * @example
 * const prices = pricesFromEnv(env, driver); // throws naming a malformed variable
 * prices.cost("openai", "gpt-5-2025-08-07", usage); // 0.0000625, or null when unpriced
 */
import { readFileSync } from "node:fs";
import { agentcliError, EnvInvalid, type ModelPrice, type PluginDriver } from "../../kernel/index.ts";
import type { TokenUsage } from "./usage-of.ts";

/** Price tables by provider, and overrides; looks a model's price up and costs a call. */
export class Prices {
  readonly #tables: Record<string, Record<string, ModelPrice>>;
  readonly #overrides: Record<string, ModelPrice>;

  constructor(tables: Record<string, Record<string, ModelPrice>>, overrides: Record<string, ModelPrice> = {}) {
    this.#tables = tables;
    this.#overrides = overrides;
  }

  /** The price of `provider:model`: an override, the provider's table (exact, the longest name it begins with, `*`). */
  of(provider: string, model: string): ModelPrice | null {
    const o = this.#overrides[`${provider}:${model}`] ?? this.#overrides[model] ??
      longestPrefix(this.#overrides, `${provider}:${model}`);
    if (o) return o;
    const table = this.#tables[provider];
    if (!table) return null;
    return table[model] ?? longestPrefix(table, model) ?? table["*"] ?? null;
  }

  /** The estimated cost in USD of a call (null when the model has no price). */
  cost(provider: string, model: string, u: TokenUsage): number | null {
    const p = this.of(provider, model);
    if (!p) return null;
    const cached = Math.min(u.cached_input_tokens ?? 0, u.input_tokens);
    const fresh = u.input_tokens - cached;
    return (fresh * p.input + cached * (p.cached_input ?? p.input) + u.output_tokens * p.output) / 1e6;
  }
}

/** The longest key of `table` that `name` begins with, followed by `-` or `@` (a dated or versioned name). */
function longestPrefix(table: Record<string, ModelPrice>, name: string): ModelPrice | undefined {
  let best: string | undefined;
  for (const k of Object.keys(table)) {
    if (name.startsWith(k) && /^[-@]/.test(name.slice(k.length)) && (!best || k.length > best.length)) best = k;
  }
  return best ? table[best] : undefined;
}

/** The model plugins' tables and the environment's overrides; a malformed override is a user error naming it. */
export function pricesFromEnv(env: Record<string, string | undefined>, driver?: PluginDriver | null): Prices {
  const tables: Record<string, Record<string, ModelPrice>> = {};
  for (const spec of driver?.specs("model") ?? []) if (spec.prices) tables[spec.prefix] = spec.prices;
  const overrides: Record<string, ModelPrice> = {};
  const file = env.AGENTCLI_MODEL_PRICES_FILE?.trim();
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw invalid("AGENTCLI_MODEL_PRICES_FILE", file, `cannot be read (${(err as NodeJS.ErrnoException).code})`);
    }
    Object.assign(overrides, parsePrices("AGENTCLI_MODEL_PRICES_FILE", file, text));
  }
  const inline = env.AGENTCLI_MODEL_PRICES?.trim();
  if (inline) Object.assign(overrides, parsePrices("AGENTCLI_MODEL_PRICES", inline, inline));
  return new Prices(tables, overrides);
}

function parsePrices(name: string, value: string, text: string): Record<string, ModelPrice> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(name, value, "is not JSON");
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw invalid(name, value, "is not a JSON object");
  }
  const out: Record<string, ModelPrice> = {};
  for (const [model, p] of Object.entries(parsed)) {
    const ok = p && typeof p === "object" && isPrice((p as ModelPrice).input) && isPrice((p as ModelPrice).output) &&
      ((p as ModelPrice).cached_input === undefined || isPrice((p as ModelPrice).cached_input));
    if (!ok) throw invalid(name, value, `gives "${model}" no valid price`);
    out[model] = p as ModelPrice;
  }
  return out;
}

const isPrice = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0;

function invalid(name: string, value: string, problem: string) {
  return agentcliError(EnvInvalid, {
    action: "start the server",
    name,
    value: value.length > 80 ? `${value.slice(0, 77)}...` : value,
    problem,
    fix:
      'Give a JSON object of USD per million tokens by "<provider>:<model>", e.g. {"openai:gpt-5": {"input": 1.25, "output": 10, "cached_input": 0.125}}.',
  });
}
