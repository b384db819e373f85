/**
 * The error catalogue: Projects (CONFIG_NOT_FOUND, CONFIG_INVALID). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

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

/** This area's entries, in the order docs/errors.md lists them. */
export const CONFIG_ERRORS: readonly ErrorData[] = [
  ConfigNotFound,
  ConfigUnreadable,
  ConfigInvalid,
  ConfigInvalidByPlugins,
  VariablesNotSet,
];
