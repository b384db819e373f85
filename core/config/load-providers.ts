/**
 * The providers an `agent.toml` names, checked against the plugins loaded (model prefixes,
 * sandbox and identity providers), and the config sections they give with their defaults.
 */
import type { Diagnostic, IdentityProviderSpec, PluginDriver, SandboxProviderSpec } from "../kernel/index.ts";
import { PLATFORM_DEFAULT_PROVIDER } from "../auth/index.ts";
import { locateTomlKey } from "./toml-locate.ts";
import {
  type AgentConfig,
  type agentTomlSchema,
  DEFAULT_FRONTEND_PROMPTS,
  DEFAULT_FRONTEND_SUBTITLE,
  DEFAULT_SANDBOX_TEMPLATE,
  MODEL_RE,
} from "./schema.ts";
import type { z } from "zod";

/** The providers the plugins know. */
export interface KnownProviders {
  sandbox: SandboxProviderSpec[];
  /** Without the platform-key plugin: it is the default without [auth], not a choice for [auth].provider. */
  identity: IdentityProviderSpec[];
  modelPrefixes: string[];
}

/** Reports a model whose provider no plugin knows (`file` is its agent.toml, `text` its text). */
export type ModelCheck = (model: string | undefined, file: string, text: string) => void;

export function knownProviders(driver: PluginDriver): KnownProviders {
  return {
    sandbox: driver.specs("sandbox"),
    identity: driver.specs("identity").filter((p) => p.provider !== PLATFORM_DEFAULT_PROVIDER),
    modelPrefixes: driver.specs("model").map((s) => s.prefix),
  };
}

export function modelCheck(providers: KnownProviders, report: (d: Diagnostic) => void): ModelCheck {
  const modelPrefixes = providers.modelPrefixes;
  return (model: string | undefined, file: string, text: string) => {
    if (!model || !MODEL_RE.test(model)) return; // the schema reports the format
    const prefix = model.slice(0, model.indexOf(":"));
    if (!modelPrefixes.includes(prefix)) {
      report({
        file,
        line: locateTomlKey(text, ["agent", "model"]),
        message: `[agent].model "${model}" uses unknown provider "${prefix}"`,
        hint: `Known providers: ${modelPrefixes.join(", ")}; or load a model plugin with --plugin.`,
      });
    }
  };
}

/** The main agent's agent.toml as parsed and as written (its raw document: provider checks read it too). */
export interface RawConfig {
  raw: unknown;
  /** The file's name in messages, and its text. */
  tomlFile: string;
  tomlText: string;
}

/**
 * Checks the providers the raw document names, so they are reported alongside schema errors;
 * resolves the spec of its sandbox provider (undefined when it is not known).
 */
export function checkProviders(
  doc: RawConfig,
  known: KnownProviders,
  out: { report: (d: Diagnostic) => void; warnings: Diagnostic[]; checkModel: ModelCheck },
): SandboxProviderSpec | undefined {
  const { tomlFile, tomlText } = doc;
  const { report, warnings } = out;
  const sandboxProviders = known.sandbox;
  const identityProviders = known.identity;
  const raw = doc.raw as {
    agent?: Record<string, unknown>;
    sandbox?: Record<string, unknown>;
    auth?: Record<string, unknown>;
    frontend?: Record<string, unknown>;
  } | null;
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  out.checkModel(str(raw?.agent?.model), tomlFile, tomlText);
  const rawSandboxProvider = str(raw?.sandbox?.provider) ?? "none";
  const sandboxSpec = sandboxProviders.find((p) => p.provider === rawSandboxProvider);
  if (!sandboxSpec) {
    report({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["sandbox", "provider"]),
      message: `[sandbox].provider "${rawSandboxProvider}" is not a known sandbox provider`,
      hint: `Use one of ${sandboxProviders.map((p) => `"${p.provider}"`).join(", ")}.`,
    });
  } else if (sandboxSpec.beta) {
    warnings.push({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["sandbox", "provider"]),
      message: `sandbox provider "${sandboxSpec.provider}" is in private beta`,
    });
  }
  const rawAuthProvider = str(raw?.auth?.provider);
  if (rawAuthProvider && !identityProviders.some((p) => p.provider === rawAuthProvider)) {
    report({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["auth", "provider"]),
      message: `[auth].provider "${rawAuthProvider}" is not a known identity provider`,
      hint: `Use one of ${identityProviders.map((p) => `"${p.provider}"`).join(", ")}.`,
    });
  }
  if (raw?.frontend?.enabled === true && raw.auth === undefined) {
    report({
      file: tomlFile,
      line: locateTomlKey(tomlText, ["frontend", "enabled"]) ?? locateTomlKey(tomlText, ["frontend"]),
      message: "[frontend].enabled = true requires an [auth] section",
      hint: `Add [auth] with provider = one of ${identityProviders.map((p) => `"${p.provider}"`).join(", ")}.`,
    });
  }
  return sandboxSpec;
}

/** The [sandbox], [auth] and [frontend] sections with their defaults. */
export function configSections(
  t: z.output<typeof agentTomlSchema> | null,
  sandboxSpec: SandboxProviderSpec | undefined,
): Pick<AgentConfig, "sandbox" | "auth" | "frontend"> {
  const sandbox: AgentConfig["sandbox"] = {
    provider: t?.sandbox?.provider ?? "none",
    template: t?.sandbox?.template ?? sandboxSpec?.defaultTemplate ?? DEFAULT_SANDBOX_TEMPLATE,
    image: t?.sandbox?.image ?? "python:3",
    scope: t?.sandbox?.scope ?? "thread",
  };
  const auth: AgentConfig["auth"] = t?.auth ? { provider: t.auth.provider } : null;
  const frontend: AgentConfig["frontend"] = {
    enabled: t?.frontend?.enabled ?? false,
    app_name: t?.frontend?.app_name ?? t?.agent.name ?? "",
    subtitle: t?.frontend?.subtitle ?? DEFAULT_FRONTEND_SUBTITLE,
    prompts: t?.frontend?.prompts ?? DEFAULT_FRONTEND_PROMPTS,
  };
  return { sandbox, auth, frontend };
}
