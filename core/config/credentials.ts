/**
 * Which environment variables a project needs (spec 2.6), from what each plugin declares:
 * model providers (main agent and subagents), the sandbox provider, the identity provider,
 * and the identity provider's browser-facing keys when `[frontend]` is on. Also chooses the
 * default model when `[agent].model` is omitted (spec 2.2).
 */
import type { Env, ModelProviderSpec, PluginDriver, SandboxProviderSpec } from "../kernel/index.ts";

export interface MissingEnv {
  /** Set all of these (or, with `anyOf`, one of them). */
  variables: string[];
  anyOf?: boolean;
  /** Why they are needed, e.g. `model "openai:gpt-5"`. */
  reason: string;
  /** Needed by the `[sandbox]` provider: a `--sandbox <runtime>` that replaces it does not need them. */
  sandbox?: boolean;
}

const isSet = (env: Env, name: string) => Boolean(env[name]);

/** The model providers that take part in choosing a default model, by their `defaultRank`. */
export function defaultModelChain(driver: PluginDriver): ModelProviderSpec[] {
  return driver.specs("model").filter((m) => m.defaultRank !== undefined).sort((a, b) =>
    a.defaultRank! - b.defaultRank!
  );
}

/** The first provider of the default chain whose credentials are set, as `provider:model`. */
export function defaultModel(driver: PluginDriver, env: Env): string | null {
  for (const spec of defaultModelChain(driver)) {
    if (spec.env.every((v) => isSet(env, v)) && !(spec.unlessEnv ?? []).some((v) => isSet(env, v))) {
      return `${spec.prefix}:${spec.defaultModel}`;
    }
  }
  return null;
}

/** The variables of the default chain, for the error when none is set. */
export function defaultChainVariables(driver: PluginDriver): string[] {
  return defaultModelChain(driver).flatMap((spec) => spec.env);
}

/** The variables a model needs that are not set. */
export function missingForModel(driver: PluginDriver, model: string, env: Env): MissingEnv | null {
  const prefix = model.slice(0, model.indexOf(":"));
  const spec = driver.spec("model", prefix);
  if (!spec) return null;
  const missing = spec.env.filter((v) => !isSet(env, v));
  return missing.length ? { variables: missing, reason: `model "${model}"` } : null;
}

/** The variables a sandbox provider needs that are not set: none when one of its `envStandIns` is set. */
export function missingSandboxEnv(
  spec: Pick<SandboxProviderSpec, "env" | "envStandIns"> | undefined,
  env: Env,
): string[] {
  if (!spec || (spec.envStandIns ?? []).some((v) => isSet(env, v))) return [];
  return spec.env.filter((v) => !isSet(env, v));
}

export function missingForProvider(variables: readonly string[], reason: string, env: Env): MissingEnv | null {
  const missing = variables.filter((v) => !isSet(env, v));
  return missing.length ? { variables: missing, reason } : null;
}

/**
 * Renders a missing-variables entry for messages: names only, never values. As a list item
 * (`one of A, B (for ...)`), or as a sentence (`none of A, B is set (for ...)`, `A is not set (for ...)`).
 */
export function describeMissing(m: MissingEnv, form: "item" | "sentence" = "item"): string {
  const names = m.variables.join(", ");
  if (form === "item") return m.anyOf ? `one of ${names} (for ${m.reason})` : `${names} (for ${m.reason})`;
  const state = m.anyOf ? `none of ${names} is set` : `${names} ${m.variables.length > 1 ? "are" : "is"} not set`;
  return `${state} (for ${m.reason})`;
}
