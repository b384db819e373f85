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
 * Call sites not yet converted still write `userError(code, { message, hint })` inline; they
 * move here file by file (docs/architecture.md, step 4).
 */

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

// ---- Environment variables (ENV_INVALID) ----

/** A seconds variable read by `secondsSetting` (core/config/env-settings.ts). */
export const EnvNotSeconds = {
  name: "EnvNotSeconds",
  code: "ENV_INVALID",
  title: "A variable that takes a number of seconds has something else.",
  message: (v: { name: string; value: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not a number of seconds`,
  hint: (v: { meaning: string; fallback: number }) => `Set it to the seconds ${v.meaning}; default ${v.fallback}.`,
} as const satisfies ErrorData;

/** An on/off variable read by `switchSetting` (core/config/env-settings.ts). */
export const EnvNotSwitch = {
  name: "EnvNotSwitch",
  code: "ENV_INVALID",
  title: "An on/off variable is neither on nor off.",
  message: (v: { name: string; value: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is neither on nor off`,
  hint: (v: { meaning: string; fallback: 0 | 1 }) => `Set it to 1 or 0: whether ${v.meaning}; default ${v.fallback}.`,
} as const satisfies ErrorData;

/** A whole-number variable read by `countSetting` (core/config/env-settings.ts); `zero` is what 0 means, when 0 is allowed. */
export const EnvNotCount = {
  name: "EnvNotCount",
  code: "ENV_INVALID",
  title: "A variable that takes a whole number has something else.",
  message: (v: { name: string; value: string; zero?: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not a ${v.zero ? "whole number" : "positive whole number"}`,
  hint: (v: { meaning: string; zero?: string; fallback: number }) =>
    `Set it to the ${v.meaning}${v.zero ? ` (0: ${v.zero})` : ""}; default ${v.fallback}.`,
} as const satisfies ErrorData;

/**
 * Any other variable with a bad value: `action` is what cannot happen ("start the server"),
 * `problem` what is wrong with the value ("is not true or false"), `fix` the hint.
 */
export const EnvInvalid = {
  name: "EnvInvalid",
  code: "ENV_INVALID",
  title: "An environment variable has a value agentcli cannot use.",
  message: (v: { action: string; name: string; value: string; problem: string }) =>
    `Cannot ${v.action}: ${v.name}="${v.value}" ${v.problem}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A true/false variable with something else. */
export const EnvNotTrueFalse = {
  name: "EnvNotTrueFalse",
  code: "ENV_INVALID",
  title: "A true/false variable is neither.",
  message: (v: { name: string; value: string }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not true or false`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A whole-number variable outside its range. */
export const EnvNotInRange = {
  name: "EnvNotInRange",
  code: "ENV_INVALID",
  title: "A variable that takes a whole number in a range has something else.",
  message: (v: { name: string; value: string; min: number; max: number }) =>
    `Cannot start the server: ${v.name}="${v.value}" is not a whole number from ${v.min} to ${v.max}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A comma-separated list variable with an entry that is not what the list holds. */
export const EnvListEntryInvalid = {
  name: "EnvListEntryInvalid",
  code: "ENV_INVALID",
  title: "A list variable has an entry of the wrong form.",
  message: (v: { name: string; entry: string; expected: string }) =>
    `Cannot start the server: ${v.name} has "${v.entry}", which is not ${v.expected}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** Variables that are each well-formed but do not go together (one needs another, or they conflict). */
export const EnvMismatch = {
  name: "EnvMismatch",
  code: "ENV_INVALID",
  title: "Environment variables do not go together.",
  message: (v: { action: string; problem: string }) => `Cannot ${v.action}: ${v.problem}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** An AES key (LANGGRAPH_AES_KEY, AGENTCLI_PLATFORM_SECRETS_KEY, ...) of the wrong length. */
export const AesKeyLength = {
  name: "AesKeyLength",
  code: "ENV_INVALID",
  title: "An encryption key is not 16, 24 or 32 bytes long.",
  message: (v: { action: string; length: number; sizes: string }) =>
    `Cannot ${v.action}: an AES key must be ${v.sizes}, and this one is ${v.length}`,
  hint: "Generate one with: openssl rand -hex 16   (32 hex characters: a 32-byte key).",
} as const satisfies ErrorData;

// ---- Projects (CONFIG_NOT_FOUND, CONFIG_INVALID) ----

/** No agent.toml at the path (`given`: the path came from --config, not the default). */
export const ConfigNotFound = {
  name: "ConfigNotFound",
  code: "CONFIG_NOT_FOUND",
  title: "The project's agent.toml does not exist.",
  message: (v: { path: string }) => `Cannot load project: "${v.path}" does not exist`,
  hint: (v: { given: boolean }) =>
    v.given
      ? "Check the --config path: an agent.toml, or the project directory that holds one."
      : 'Run "agentcli init" to create a project, or pass --config <path> to an existing agent.toml.',
} as const satisfies ErrorData;

/** The path of agent.toml is there but is not a file agentcli can read (a folder, a device). */
export const ConfigUnreadable = {
  name: "ConfigUnreadable",
  code: "CONFIG_NOT_FOUND",
  title: "The project's agent.toml is not a readable file.",
  message: (v: { path: string }) => `Cannot load project: "${v.path}" is not a readable file`,
  hint: "Pass --config an agent.toml, or the project directory that holds one.",
} as const satisfies ErrorData;

/** A project with problems, each a diagnostic (file, line, message, fix) listed under the message. */
export const ConfigInvalid = {
  name: "ConfigInvalid",
  code: "CONFIG_INVALID",
  title:
    "A project's files have problems (agent.toml, .env, mcp.json, skills, ...); each is listed with its file and line.",
  message: (v: { path: string; count: number }) =>
    `Cannot load project "${v.path}": ${v.count} problem${v.count > 1 ? "s" : ""}`,
  hint: (v: { count: number }) =>
    `Fix the problem${v.count > 1 ? "s" : ""} above and run the command again; nothing was written.`,
} as const satisfies ErrorData;

/** Problems a plugin's hook found in the project (listed as diagnostics). */
export const ConfigInvalidByPlugins = {
  name: "ConfigInvalidByPlugins",
  code: "CONFIG_INVALID",
  title: "Plugins found problems in the project; each is listed with its file.",
  message: (v: { path: string; count: number }) =>
    `Cannot load project "${v.path}": ${v.count} problem${v.count > 1 ? "s" : ""} reported by plugins`,
} as const satisfies ErrorData;

/** `${VAR}` references (in mcp.json, ...) to variables that are not set (HTTP 422 when a request meets it). */
export const VariablesNotSet = {
  name: "VariablesNotSet",
  code: "CREDENTIALS_MISSING",
  title: "A `${VAR}` reference names a variable that is not set.",
  message: (v: { where: string; names: string[] }) =>
    `Cannot expand ${v.where}: ${v.names.map((m) => `\${${m}}`).join(", ")} ${
      v.names.length > 1 ? "are" : "is"
    } not set`,
  hint: (v: { names: string[] }) => `Add ${v.names.join(", ")} to .env (or the deployment's secrets).`,
} as const satisfies ErrorData;

// ---- Bundles (BUNDLE_INVALID) ----

/** A bundle archive that is damaged, not a bundle, or unpacks past its bound; `problem` says which. */
export const BundleInvalid = {
  name: "BundleInvalid",
  code: "BUNDLE_INVALID",
  title: "A bundle archive is damaged, not an agentcli bundle, or too large unpacked.",
  message: (v: { source: string; problem: string }) => `Cannot read ${v.source}: ${v.problem}`,
  hint: 'Build a bundle with "agentcli deploy --dry-run" (it writes .agentcli/bundle.tgz).',
} as const satisfies ErrorData;

// ---- Plugins (PLUGIN_INVALID) ----

/** `--plugin ""` or an empty entry of AGENTCLI_PLUGINS. */
export const PluginPathEmpty = {
  name: "PluginPathEmpty",
  code: "PLUGIN_INVALID",
  title: "A plugin path is empty.",
  message: "Cannot load plugin: empty path",
  hint: "Pass a file: --plugin ./my-plugin.js",
} as const satisfies ErrorData;

/** A plugin path that names no file. */
export const PluginFileMissing = {
  name: "PluginFileMissing",
  code: "PLUGIN_INVALID",
  title: "A plugin path names no file.",
  message: (v: { path: string }) => `Cannot load plugin "${v.path}": no such file`,
  hint: "Check the path given to --plugin or AGENTCLI_PLUGINS.",
} as const satisfies ErrorData;

/** A plugin file that does not load as a module (a syntax error, a missing import). */
export const PluginLoadFailed = {
  name: "PluginLoadFailed",
  code: "PLUGIN_INVALID",
  title: "A plugin file does not load as an ES module.",
  message: (v: { path: string; reason: string }) => `Cannot load plugin "${v.path}": ${v.reason}`,
  hint:
    "A plugin file is an ES module whose default export is a plugin (see docs/plugins.md, section The plugin object).",
} as const satisfies ErrorData;

/** A plugin module without a default export. */
export const PluginNoDefaultExport = {
  name: "PluginNoDefaultExport",
  code: "PLUGIN_INVALID",
  title: "A plugin module has no default export.",
  message: (v: { path: string }) => `Cannot load plugin "${v.path}": it has no default export`,
  hint: "Export the plugin: export default definePlugin({ ... }).",
} as const satisfies ErrorData;

// ---- Storage (UNPROCESSABLE, REMOTE_FAILED, SERVICE_UNREACHABLE) ----

/** A search filter on fields that are encrypted at rest, so cannot be compared in SQL. */
export const SearchEncrypted = {
  name: "SearchEncrypted",
  code: "UNPROCESSABLE",
  title: "A search filters on fields that are encrypted at rest.",
  message: (v: { what: string; by: string; keys: string }) =>
    `Cannot search ${v.what} by ${v.by}: encrypted at rest (${v.keys}), so not searchable`,
  hint: "Filter on metadata keys that are not listed in LANGGRAPH_AES_JSON_KEYS.",
} as const satisfies ErrorData;

/** A store index names a field the item's value does not have. */
export const StoreIndexField = {
  name: "StoreIndexField",
  code: "UNPROCESSABLE",
  title: "A store item's index names a field its value does not have.",
  message: (v: { field: string }) => `Invalid store index: field "${v.field}" is not in the item's value`,
  hint: 'Name fields of the value: "$" (all of it), "a.b", "list[*].text"; or index: false.',
} as const satisfies ErrorData;

/** The embedding model of the store failed (HTTP 502). */
export const EmbeddingFailed = {
  name: "EmbeddingFailed",
  code: "REMOTE_FAILED",
  title: "The store's embedding model failed.",
  message: (v: { model: string; reason: string }) => `Cannot embed for the store with "${v.model}": ${v.reason}`,
  hint: "Check AGENTCLI_STORE_EMBEDDINGS and the provider's credentials and address.",
} as const satisfies ErrorData;

/** The embedding model answered, but not one vector per text (HTTP 502). */
export const EmbeddingCount = {
  name: "EmbeddingCount",
  code: "REMOTE_FAILED",
  title: "The store's embedding model did not return one vector per text.",
  message: (v: { model: string; vectors: number; texts: number }) =>
    `Cannot embed for the store with "${v.model}": it returned ${v.vectors} vectors for ${v.texts} texts`,
} as const satisfies ErrorData;

/** PostgreSQL or Redis cannot be reached at start-up within AGENTCLI_CONNECT_TIMEOUT_SECONDS. */
export const ServiceUnreachable = {
  name: "ServiceUnreachable",
  code: "SERVICE_UNREACHABLE",
  title: "PostgreSQL or Redis cannot be reached when the server starts.",
  message: (v: { service: string; address: string; variable: string; reason: string; seconds: number }) =>
    `Cannot connect to ${v.service} at ${v.address} (${v.variable}): ${v.reason} (tried for ${v.seconds} s)`,
  hint: (v: { service: string; variable: string; fallback: number }) =>
    `Check that ${v.service} is running and reachable from here and that ${v.variable} is right; AGENTCLI_CONNECT_TIMEOUT_SECONDS (default ${v.fallback}) sets how long the start-up keeps trying.`,
} as const satisfies ErrorData;

/** PostgreSQL dropped away while the server runs and did not come back in time (HTTP 503). */
export const DatabaseUnreachable = {
  name: "DatabaseUnreachable",
  code: "SERVICE_UNREACHABLE",
  title: "The database dropped away while the server runs.",
  message: (v: { reason: string; seconds: number }) =>
    `The database is unreachable (${v.reason}; retried for ${v.seconds} s)`,
  hint: (v: { retryAfter: number }) =>
    `Retry in ${v.retryAfter} s; the server keeps trying to reach PostgreSQL (AGENTCLI_DB_RETRY_SECONDS sets how long background work waits).`,
} as const satisfies ErrorData;

// ---- Requests of the Agent API (NOT_FOUND, CONFLICT, UNPROCESSABLE) ----

/** A resource a request names does not exist (or is not the caller's to see). */
export const NotFound = {
  name: "NotFound",
  code: "NOT_FOUND",
  title: "The thread, run, assistant or other resource a request names does not exist.",
  message: (v: { thing: string; id: string }) => `${v.thing} "${v.id}" not found`,
  hint: (v: { thing: string }) => `Check the ${v.thing.toLowerCase()} id.`,
} as const satisfies ErrorData;

/** Creating a resource with a chosen id that is in use (by anyone: ids are one namespace). */
export const IdTaken = {
  name: "IdTaken",
  code: "CONFLICT",
  title: "A resource is created with an id that is taken.",
  message: (v: { thing: string; id: string }) => `Cannot create ${v.thing} "${v.id}": the id is taken`,
  hint: (v: { thing: string }) => `Leave out the ${v.thing} id to get a new random one.`,
} as const satisfies ErrorData;

/** A request that conflicts with the state of what it acts on; `problem` says how (not yet split into entries). */
export const RequestConflict = {
  name: "RequestConflict",
  code: "CONFLICT",
  title: "A request conflicts with the current state (a run is busy, a value is in use).",
  message: (v: { problem: string }) => v.problem,
  hint: (v: { fix?: string }) => v.fix ?? "",
} as const satisfies ErrorData;

/** A request whose values cannot be used; `problem` says which and why (not yet split into entries). */
export const RequestUnprocessable = {
  name: "RequestUnprocessable",
  code: "UNPROCESSABLE",
  title: "A request is well-formed but a value in it cannot be used.",
  message: (v: { problem: string }) => v.problem,
} as const satisfies ErrorData;

// ---- Files (FILE_FAILED) ----

/** An operating-system error on a path, from `fromSystemError` (core/kernel/errors.ts). */
export const FileFailed = {
  name: "FileFailed",
  code: "FILE_FAILED",
  title: "A file or folder cannot be used: permissions, a full disk, a file where a folder should be.",
  message: (v: { action: string; path: string; reason: string }) => `Cannot ${v.action} "${v.path}": ${v.reason}`,
  hint: "Check the path and its permissions, then run the command again.",
} as const satisfies ErrorData;

/** Every entry, in the order docs/errors.md lists them (a test checks each export is here). */
export const ERRORS: readonly ErrorData[] = [
  EnvNotSeconds,
  EnvNotSwitch,
  EnvNotCount,
  EnvNotTrueFalse,
  EnvNotInRange,
  EnvInvalid,
  EnvListEntryInvalid,
  EnvMismatch,
  AesKeyLength,
  ConfigNotFound,
  ConfigUnreadable,
  ConfigInvalid,
  ConfigInvalidByPlugins,
  VariablesNotSet,
  BundleInvalid,
  PluginPathEmpty,
  PluginFileMissing,
  PluginLoadFailed,
  PluginNoDefaultExport,
  SearchEncrypted,
  StoreIndexField,
  EmbeddingFailed,
  EmbeddingCount,
  ServiceUnreachable,
  DatabaseUnreachable,
  NotFound,
  IdTaken,
  RequestConflict,
  RequestUnprocessable,
  FileFailed,
];
