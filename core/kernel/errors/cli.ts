/**
 * The error catalogue: the command line (ARGS_INVALID, PROJECT_EXISTS, CONFIRMATION_REQUIRED, ...) of
 * `agentcli init`, `build`, `serve` and `deploy` (`platform`'s are in ./cli-platform.ts). Entries of one area; core/kernel/errors-data.ts lists
 * every area (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(", ");

/** An option the command does not declare. */
export const ArgsUnknownOption = {
  name: "ArgsUnknownOption",
  code: "ARGS_INVALID",
  title: "A command got an option it does not take.",
  message: (v: { command: string; option: string }) =>
    `Cannot run "agentcli ${v.command}": unknown option "${v.option}"`,
  hint: (v: { command: string }) => `Run "agentcli ${v.command} --help" for the options it takes.`,
} as const satisfies ErrorData;

/** An option that takes a value, given without one. */
export const ArgsValueMissing = {
  name: "ArgsValueMissing",
  code: "ARGS_INVALID",
  title: "An option that takes a value has none.",
  message: (v: { command: string; flag: string }) =>
    `Cannot run "agentcli ${v.command}": option "${v.flag}" needs a value`,
  hint: (v: { flag: string; placeholder: string }) => `Write it as ${v.flag} ${v.placeholder}.`,
} as const satisfies ErrorData;

/** An option's value of the wrong kind (`expected`: "true or false", "an integer from 1"). */
export const ArgsBadValue = {
  name: "ArgsBadValue",
  code: "ARGS_INVALID",
  title: "An option's value is not of the kind it takes.",
  message: (v: { command: string; flag: string; value: string; expected: string }) =>
    `Cannot run "agentcli ${v.command}": option "${v.flag}" got "${v.value}", expected ${v.expected}`,
  hint: (v: { command: string }) => `Run "agentcli ${v.command} --help" for the options it takes.`,
} as const satisfies ErrorData;

/** A required argument that is not given. */
export const ArgsMissing = {
  name: "ArgsMissing",
  code: "ARGS_INVALID",
  title: "A command misses an argument it needs.",
  message: (v: { command: string; argument: string }) => `Cannot run "agentcli ${v.command}": missing <${v.argument}>`,
  hint: (v: { usage: string }) => `Usage: ${v.usage}`,
} as const satisfies ErrorData;

/** More arguments than the command takes. */
export const ArgsUnexpected = {
  name: "ArgsUnexpected",
  code: "ARGS_INVALID",
  title: "A command got an argument it does not take.",
  message: (v: { command: string; argument: string }) =>
    `Cannot run "agentcli ${v.command}": unexpected argument "${v.argument}"`,
  hint: (v: { usage: string }) => `Usage: ${v.usage}`,
} as const satisfies ErrorData;

/** `agentcli init` with a folder name longer than a file system allows. */
export const InitNameTooLong = {
  name: "InitNameTooLong",
  code: "ARGS_INVALID",
  title: "`agentcli init` got a folder name too long for a file system.",
  message: (v: { folder: string; bytes: number }) =>
    `Cannot scaffold "${v.folder}": the folder name is ${v.bytes} bytes, more than the 255 a file system allows`,
  hint: "Pass a shorter name: agentcli init my-agent",
} as const satisfies ErrorData;

/** `agentcli init` in a folder whose name has nothing an agent name can keep. */
export const InitNameInvalid = {
  name: "InitNameInvalid",
  code: "ARGS_INVALID",
  title: "`agentcli init`'s folder name does not make an agent name.",
  message: (v: { folder: string }) => `Cannot scaffold "${v.folder}": the folder name does not make an agent name`,
  hint: "Pass a name of letters, digits, '-', '_' or '.': agentcli init my-agent",
} as const satisfies ErrorData;

/** `agentcli init` (without --force) where the scaffold's files exist. */
export const InitFilesExist = {
  name: "InitFilesExist",
  code: "PROJECT_EXISTS",
  title: "`agentcli init` would overwrite files of a project.",
  message: (v: { folder: string; files: string[] }) =>
    `Cannot scaffold into "${v.folder}": ${quoted(v.files)} already exist${v.files.length === 1 ? "s" : ""}`,
  hint: "Choose another folder, or pass --force to overwrite these files (other files are left alone).",
} as const satisfies ErrorData;

/** Writing the scaffold's files failed (what this run wrote is removed again). */
export const InitWriteFailed = {
  name: "InitWriteFailed",
  code: "PROJECT_EXISTS",
  title: "`agentcli init` cannot write the scaffold's files.",
  message: (v: { folder: string; reason: string }) => `Cannot scaffold into "${v.folder}": ${v.reason}`,
  hint: "Check that the folder is writable.",
} as const satisfies ErrorData;

/** The target folder (or a parent) cannot be looked at. */
export const InitFolderUnusable = {
  name: "InitFolderUnusable",
  code: "PROJECT_EXISTS",
  title: "`agentcli init`'s folder cannot be used.",
  message: (v: { folder: string; reason: string }) => `Cannot scaffold into "${v.folder}": ${v.reason}`,
  hint: "Choose another folder.",
} as const satisfies ErrorData;

/** A part of the target path is a file. */
export const InitInsideFile = {
  name: "InitInsideFile",
  code: "PROJECT_EXISTS",
  title: "`agentcli init`'s folder would be inside a file.",
  message: (v: { folder: string; path: string }) =>
    `Cannot scaffold into "${v.folder}": "${v.path}" is a file, not a folder`,
  hint: "Choose a folder that is not inside a file.",
} as const satisfies ErrorData;

/** A folder of the target path cannot be created. */
export const InitFolderNotCreated = {
  name: "InitFolderNotCreated",
  code: "PROJECT_EXISTS",
  title: "`agentcli init` cannot create its folder.",
  message: (v: { folder: string; path: string; reason: string }) =>
    `Cannot scaffold into "${v.folder}": cannot create "${v.path}" (${v.reason})`,
  hint: "Choose a folder you can write to.",
} as const satisfies ErrorData;

/** `agentcli build --plugin <x>` where x is neither a file nor an installed package. */
export const BuildPluginUnknown = {
  name: "BuildPluginUnknown",
  code: "ARGS_INVALID",
  title: "`agentcli build` got a plugin that is neither a file nor an installed package.",
  message: (v: { plugin: string }) => `Cannot build: plugin "${v.plugin}" is neither a file nor an installed package`,
  hint: (v: { plugin: string }) => `Give a plugin file's path, or install the package first (npm install ${v.plugin}).`,
} as const satisfies ErrorData;

/** `agentcli build` without --output. */
export const BuildOutputMissing = {
  name: "BuildOutputMissing",
  code: "ARGS_INVALID",
  title: "`agentcli build` needs --output.",
  message: 'Cannot run "agentcli build": --output is required',
  hint: "agentcli --plugin ./my-plugin.ts build --output ./agentcli-custom",
} as const satisfies ErrorData;

/** `agentcli build` from an executable or the npm package, which have no sources to compile. */
export const BuildNoSources = {
  name: "BuildNoSources",
  code: "ARGS_INVALID",
  title: "`agentcli build` runs from a checkout of agentcli's sources only.",
  message:
    'Cannot run "agentcli build": it compiles agentcli\'s sources, and this agentcli has none (an executable or the npm package)',
  hint:
    "Run it from a checkout of agentcli: npm ci, then node bin/agentcli.js --plugin <plugin> build --output <file>.",
} as const satisfies ErrorData;

/** `agentcli build --target` naming more than one platform. */
export const BuildManyTargets = {
  name: "BuildManyTargets",
  code: "ARGS_INVALID",
  title: "`agentcli build --target` names more than one platform.",
  message: (v: { target: string; count: number }) =>
    `Cannot run "agentcli build": --target "${v.target}" names ${v.count} platforms, and build writes one executable`,
  hint: "Run build once per platform, each with its own --target and --output.",
} as const satisfies ErrorData;

/** The built executable does not start with its plugins; `refusal` is what it printed. */
export const BuildPluginsRefused = {
  name: "BuildPluginsRefused",
  code: "PLUGIN_INVALID",
  title: "The executable `agentcli build` wrote refuses its plugins.",
  message: (v: { output: string }) => `Cannot build "${v.output}": the new executable refuses its plugins`,
  hint: (v: { refusal: string }) => `${v.refusal.trim()}\nFix the plugin it names, or leave it out of --plugin.`,
} as const satisfies ErrorData;

/** The executable `agentcli build` wrote cannot be started on this machine to check its plugins. */
export const BuildExecutableNotRunnable = {
  name: "BuildExecutableNotRunnable",
  code: "FILE_FAILED",
  title: "The executable `agentcli build` wrote does not start on this machine.",
  message: (v: { output: string; reason: string }) =>
    `Cannot build "${v.output}": the new executable does not start (${v.reason})`,
  hint: "Write it to a folder that allows running programs (not mounted noexec), or build for this machine's --target.",
} as const satisfies ErrorData;

/** `agentcli serve <bundle>` with a path that is not a file. */
export const BundleFileMissing = {
  name: "BundleFileMissing",
  code: "BUNDLE_INVALID",
  title: "`agentcli serve`'s bundle file does not exist.",
  message: (v: { path: string }) => `Cannot read bundle "${v.path}": no such file`,
  hint: 'Build one with "agentcli deploy --dry-run" (it writes .agentcli/bundle.tgz).',
} as const satisfies ErrorData;

/** `agentcli router` without one of the options it needs. */
export const RouterOptionMissing = {
  name: "RouterOptionMissing",
  code: "ARGS_INVALID",
  title: "`agentcli router` lacks an option it needs.",
  message: (v: { option: string }) => `Cannot start the canary router: --${v.option} is required`,
  hint:
    "It runs in a Kubernetes canary's router pod, which passes --serving, --canary, --percent, --deployment and --revision.",
} as const satisfies ErrorData;

/** `agentcli router` without `DATABASE_URL` (where the canary's threads are kept). */
export const RouterNoDatabase = {
  name: "RouterNoDatabase",
  code: "ENV_INVALID",
  title: "`agentcli router` has no database for the canary's threads.",
  message: "Cannot start the canary router: DATABASE_URL is not set",
  hint:
    "Set DATABASE_URL to the deployment's PostgreSQL (its revisions' own): every router replica keeps the canary's threads there.",
} as const satisfies ErrorData;

/** `agentcli deploy --json` without --dry-run. */
export const DeployJsonNeedsDryRun = {
  name: "DeployJsonNeedsDryRun",
  code: "ARGS_INVALID",
  title: "`agentcli deploy --json` goes with --dry-run.",
  message: 'Cannot run "agentcli deploy": --json goes with --dry-run',
  hint: "agentcli deploy --dry-run --json",
} as const satisfies ErrorData;

/** `agentcli deploy --target` naming no deploy plugin. */
export const DeployTargetUnknown = {
  name: "DeployTargetUnknown",
  code: "ARGS_INVALID",
  title: "`agentcli deploy --target` names no deploy target.",
  message: (v: { target: string }) => `Cannot deploy: no deploy target "${v.target}"`,
  hint: (v: { known: string[] }) =>
    `Use --target with one of ${quoted(v.known)}, or load the plugin that provides it with --plugin.`,
} as const satisfies ErrorData;

/** The deploy target's own variables (PLATFORM_API_KEY) are not set; `reason` is the target's why. */
export const DeployCredentialsMissing = {
  name: "DeployCredentialsMissing",
  code: "CREDENTIALS_MISSING",
  title: "The deploy target's credentials are not set.",
  message: (v: { names: string[] }) =>
    `Cannot deploy: ${v.names.join(", ")} ${v.names.length > 1 ? "are" : "is"} not set`,
  hint: (v: { names: string[]; reason?: string }) =>
    `Add ${v.names.map((n) => `${n}=...`).join(", ")} to .env beside agent.toml or the environment${
      v.reason ? ` (${v.reason})` : ""
    }.`,
} as const satisfies ErrorData;

/** A public deployment with nobody at a terminal to confirm it. */
export const DeployPublicUnconfirmed = {
  name: "DeployPublicUnconfirmed",
  code: "CONFIRMATION_REQUIRED",
  title: "A public deployment needs --yes when there is no terminal to confirm it.",
  message: (v: { provider: string }) =>
    `Cannot deploy: [auth] provider = "${v.provider}" makes the deployment public, and there is no terminal to confirm it`,
  hint: (v: { perUser: string[] }) =>
    `Pass --yes to confirm a public deployment non-interactively${
      v.perUser.length ? `, or configure ${v.perUser.join(" / ")}` : ""
    }.`,
} as const satisfies ErrorData;

/** The deploy target's plugin answered null. */
export const DeployTargetUnhandled = {
  name: "DeployTargetUnhandled",
  code: "DEPLOY_FAILED",
  title: "The deploy target's plugin did not handle the deploy.",
  message: (v: { plugin: string; target: string }) =>
    `Cannot deploy: the plugin "${v.plugin}" did not handle the deploy target "${v.target}"`,
  hint: `Its "deploy:target" hook answered null; report it to the plugin's author.`,
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const CLI_ERRORS: readonly ErrorData[] = [
  ArgsUnknownOption,
  ArgsValueMissing,
  ArgsBadValue,
  ArgsMissing,
  ArgsUnexpected,
  InitNameTooLong,
  InitNameInvalid,
  InitFilesExist,
  InitWriteFailed,
  InitFolderUnusable,
  InitInsideFile,
  InitFolderNotCreated,
  BuildPluginUnknown,
  BuildOutputMissing,
  BuildNoSources,
  BuildManyTargets,
  BuildPluginsRefused,
  BuildExecutableNotRunnable,
  BundleFileMissing,
  RouterOptionMissing,
  RouterNoDatabase,
  DeployJsonNeedsDryRun,
  DeployTargetUnknown,
  DeployCredentialsMissing,
  DeployPublicUnconfirmed,
  DeployTargetUnhandled,
];
