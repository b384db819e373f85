/**
 * Every user-facing error: its code (what it means for the exit code and the HTTP status) and,
 * entry by entry, its title, message template and hint. docs/errors.md is generated from this
 * file (`node scripts/gen-errors.ts`); `tests/toolchain/errors-doc.test.ts` fails when it is stale.
 *
 * A call site names the entry and its values, and TypeScript checks the values:
 *
 * @example
 * throw agentcliError(EnvNotSeconds, { name, value: raw, meaning, fallback: String(dflt) });
 *
 * The entries live by area in core/kernel/errors/ (one file an area, each with its list);
 * this file holds the codes, the entry shape and `ERRORS`, every area in order.
 */

import { ENV_ERRORS } from "./errors/env.ts";
import { CONFIG_ERRORS } from "./errors/config.ts";
import { BUNDLE_ERRORS } from "./errors/bundle.ts";
import { PLUGINS_ERRORS } from "./errors/plugins.ts";
import { STORAGE_ERRORS } from "./errors/storage.ts";
import { REQUESTS_ERRORS } from "./errors/requests.ts";
import { FILES_ERRORS } from "./errors/files.ts";
import { CLI_ERRORS } from "./errors/cli.ts";
import { CLI_PLATFORM_ERRORS } from "./errors/cli-platform.ts";
import { EVALS_ERRORS } from "./errors/evals.ts";
import { RELEASE_ERRORS } from "./errors/release.ts";
import { AUTH_ERRORS } from "./errors/auth.ts";
import { HARNESS_ERRORS } from "./errors/harness.ts";
import { SANDBOX_ERRORS } from "./errors/sandbox.ts";
import { ENGINE_ERRORS } from "./errors/engine.ts";
import { DEPLOY_ERRORS } from "./errors/deploy.ts";
import { RUNS_ERRORS } from "./errors/runs.ts";
import { SERVER_ERRORS } from "./errors/server.ts";
import { AGENT_API_ERRORS } from "./errors/agent-api.ts";
import { PLATFORM_ERRORS } from "./errors/platform.ts";
import { COMPUTE_ERRORS } from "./errors/compute.ts";
import { LANGGRAPH_ERRORS } from "./errors/langgraph.ts";

/** What an error code means for the process (exit code) and over HTTP (status). */
export interface ErrorCodeInfo {
  /** The CLI's exit code: 2 only for a wrong command line (argv), 1 for everything else. */
  exit: 1 | 2;
  /** The HTTP status when the error answers a request. */
  status: number;
  /** One sentence: when this code is used. */
  meaning: string;
}

/** The error codes, in the order docs/errors.md lists them. */
export const ERROR_CODES = {
  ARGS_INVALID: {
    exit: 2,
    status: 422,
    meaning: "The command line is wrong: an unknown command, a missing or bad flag or argument.",
  },
  ENV_INVALID: {
    exit: 1,
    status: 422,
    meaning: "An environment variable has a bad value, or variables that go together are not all set.",
  },
  CONFIG_NOT_FOUND: { exit: 1, status: 400, meaning: "No agent.toml in this folder or above it." },
  CONFIG_INVALID: {
    exit: 1,
    status: 422,
    meaning: "A project file (agent.toml, .env, mcp.json, skills, ...) is malformed.",
  },
  PROJECT_EXISTS: { exit: 1, status: 400, meaning: "`agentcli init` would overwrite files of an existing project." },
  GRAPH_INVALID: {
    exit: 1,
    status: 422,
    meaning: "A graph module does not export a graph (a compiled graph, a StateGraph, or a function returning one).",
  },
  PLUGIN_INVALID: { exit: 1, status: 400, meaning: "A plugin does not load or does not have the shape of a plugin." },
  PLUGIN_FAILED: {
    exit: 1,
    status: 400,
    meaning: "A plugin loaded but failed while it ran, or cannot run on this machine.",
  },
  BUNDLE_INVALID: {
    exit: 1,
    status: 422,
    meaning: "A bundle (the packed project a deployment runs) is malformed or too large.",
  },
  CONFIRMATION_REQUIRED: {
    exit: 1,
    status: 400,
    meaning: "The command would change something that asks for an explicit yes (--yes).",
  },
  CREDENTIALS_MISSING: {
    exit: 1,
    status: 400,
    meaning: "A credential (an API key, a token) the command needs is not set.",
  },
  PORT_IN_USE: { exit: 1, status: 400, meaning: "The port to listen on is taken by another process." },
  NOT_FOUND: {
    exit: 1,
    status: 404,
    meaning: "The thing asked for (a thread, a run, an assistant, a deployment, ...) does not exist.",
  },
  CONFLICT: {
    exit: 1,
    status: 409,
    meaning: "The request conflicts with the current state (it exists already, it is busy).",
  },
  UNPROCESSABLE: { exit: 1, status: 422, meaning: "The request is well-formed but its values cannot be used." },
  RATE_LIMITED: {
    exit: 1,
    status: 429,
    meaning: "Too many runs for now: a user's runs waiting, or runs per minute; retry later (`Retry-After`).",
  },
  BUDGET_EXCEEDED: {
    exit: 1,
    status: 429,
    meaning: "A daily usage budget (tokens or cost) is spent: a new run is refused, a run in flight stops.",
  },
  UNAUTHORIZED: { exit: 1, status: 401, meaning: "No credentials, or credentials that are not valid." },
  FORBIDDEN: { exit: 1, status: 403, meaning: "Valid credentials that do not allow this." },
  DEPLOY_FAILED: { exit: 1, status: 400, meaning: "A deployment did not build, start or become ready." },
  REMOTE_FAILED: {
    exit: 1,
    status: 400,
    meaning: "A remote service (the control plane, a registry, a model provider) answered with an error.",
  },
  FILE_FAILED: {
    exit: 1,
    status: 400,
    meaning: "A file or folder cannot be read or written (permissions, a full disk, ...).",
  },
  EVALS_FAILED: {
    exit: 1,
    status: 422,
    meaning: "`agentcli eval` ran, and one or more eval cases failed (a check did not hold, or the run failed).",
  },
  SERVICE_UNREACHABLE: {
    exit: 1,
    status: 503,
    meaning: "A service the server needs (PostgreSQL, Redis, ...) cannot be reached.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * One catalogue entry. `message` and `hint` are a string or a function of named values;
 * the values a call site must pass are the parameters of both ({@link ErrorValues}).
 */
export interface ErrorData {
  /** The entry's name, as exported from this file. */
  name: string;
  code: ErrorCode;
  /** One sentence for docs/errors.md: what went wrong, in general. */
  title: string;
  message: string | ((v: never) => string);
  hint?: string | ((v: never) => string);
}

type ParamOf<T> = T extends (v: infer V) => string ? V : unknown;

/** The values an entry's message and hint take. */
export type ErrorValues<E extends ErrorData> = ParamOf<E["message"]> & ParamOf<E["hint"]>;

export * from "./errors/env.ts";
export * from "./errors/config.ts";
export * from "./errors/bundle.ts";
export * from "./errors/plugins.ts";
export * from "./errors/storage.ts";
export * from "./errors/requests.ts";
export * from "./errors/files.ts";
export * from "./errors/cli.ts";
export * from "./errors/cli-platform.ts";
export * from "./errors/auth.ts";
export * from "./errors/harness.ts";
export * from "./errors/sandbox.ts";
export * from "./errors/engine.ts";
export * from "./errors/deploy.ts";
export * from "./errors/runs.ts";
export * from "./errors/server.ts";
export * from "./errors/agent-api.ts";
export * from "./errors/platform.ts";
export * from "./errors/compute.ts";
export * from "./errors/langgraph.ts";
export * from "./errors/evals.ts";
export * from "./errors/release.ts";

/** Every entry, in the order docs/errors.md lists them (a test checks each export is here). */
export const ERRORS: readonly ErrorData[] = [
  ...ENV_ERRORS,
  ...CONFIG_ERRORS,
  ...BUNDLE_ERRORS,
  ...PLUGINS_ERRORS,
  ...STORAGE_ERRORS,
  ...REQUESTS_ERRORS,
  ...FILES_ERRORS,
  ...CLI_ERRORS,
  ...CLI_PLATFORM_ERRORS,
  ...EVALS_ERRORS,
  ...RELEASE_ERRORS,
  ...AUTH_ERRORS,
  ...HARNESS_ERRORS,
  ...SANDBOX_ERRORS,
  ...ENGINE_ERRORS,
  ...DEPLOY_ERRORS,
  ...RUNS_ERRORS,
  ...SERVER_ERRORS,
  ...AGENT_API_ERRORS,
  ...PLATFORM_ERRORS,
  ...COMPUTE_ERRORS,
  ...LANGGRAPH_ERRORS,
];
