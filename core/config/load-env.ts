/**
 * A project's environment: `.env` (its values are deployment secrets) under the process
 * environment, and the variables the project's providers need that are not set (spec 2.6).
 */
import type { Diagnostic, Env, PluginDriver } from "../kernel/index.ts";
import {
  defaultChainVariables,
  defaultModel,
  describeMissing,
  type MissingEnv,
  missingForModel,
  missingForProvider,
  missingSandboxEnv,
} from "./credentials.ts";
import { parseDotenv } from "./dotenv.ts";
import type { KnownProviders } from "./load-providers.ts";
import type { ProjectFiles } from "./project-files.ts";
import type { AgentConfig, SubagentConfig } from "./schema.ts";

/** `.env`'s set values (`secrets`), and the environment the project runs with: them under `processEnv`. */
export function projectEnv(
  files: ProjectFiles,
  processEnv: Env,
  report: (d: Diagnostic) => void,
): { secrets: Record<string, string>; env: Env } {
  const dotenv = files.readText(".env");
  const parsed = dotenv === null ? {} : parseDotenv(dotenv, files.display(".env"));
  if (dotenv !== null) (parsed as { problems: Diagnostic[] }).problems.forEach(report);
  const secrets = dotenv === null ? {} : Object.fromEntries(
    Object.entries((parsed as { values: Record<string, string> }).values).filter(([, v]) => v !== ""),
  );
  const env: Env = {
    ...secrets,
    ...Object.fromEntries(Object.entries(processEnv).filter(([, v]) => v !== undefined)),
  };
  return { secrets, env };
}

/** What the project chose, for the variables it needs. */
export interface ProjectNeeds {
  driver: PluginDriver;
  providers: KnownProviders;
  env: Env;
  /** `[agent].model` (null: the default model, chosen here). */
  model: string | null;
  subagents: SubagentConfig[];
  sandbox: AgentConfig["sandbox"];
  auth: AgentConfig["auth"];
  frontend: AgentConfig["frontend"];
}

/** Credentials and provider variables (spec 2.6) not set; the model, the default one when none is set. */
export function missingEnvOf(need: ProjectNeeds): { model: string | null; missingEnv: MissingEnv[] } {
  const { driver, env, sandbox, auth } = need;
  const missingEnv: MissingEnv[] = [];
  const add = (m: MissingEnv | null) => m && missingEnv.push(m);
  let model = need.model;
  if (model) add(missingForModel(driver, model, env));
  else {
    model = defaultModel(driver, env);
    if (!model) {
      missingEnv.push({
        variables: defaultChainVariables(driver),
        anyOf: true,
        reason: "a default model ([agent].model is not set)",
      });
    }
  }
  for (const sa of need.subagents) if (sa.model) add(missingForModel(driver, sa.model, env));
  const sandboxSpec = need.providers.sandbox.find((p) => p.provider === sandbox.provider);
  const sandboxMissing = sandboxSpec
    ? missingForProvider(missingSandboxEnv(sandboxSpec, env), `sandbox provider "${sandbox.provider}"`, env)
    : null;
  if (sandboxMissing) add({ ...sandboxMissing, sandbox: true });
  const identitySpec = auth && need.providers.identity.find((p) => p.provider === auth!.provider);
  if (identitySpec) {
    add(missingForProvider(identitySpec.env, `[auth] provider "${identitySpec.provider}"`, env));
    if (need.frontend.enabled) {
      add(missingForProvider(identitySpec.frontendEnv, `the frontend's "${identitySpec.provider}" sign-in`, env));
    }
  }
  return { model, missingEnv };
}

/** The problems `missingEnv` makes when variables are required (deploy). */
export function missingEnvProblems(missingEnv: MissingEnv[], files: ProjectFiles): Diagnostic[] {
  const dotenvName = files.display(".env");
  return missingEnv.map((m) => ({
    file: dotenvName,
    message: describeMissing(m, "sentence"),
    hint: `Add ${
      m.anyOf ? "one of them" : m.variables.map((v) => `${v}=...`).join(", ")
    } to ${dotenvName} or the environment.`,
  }));
}
