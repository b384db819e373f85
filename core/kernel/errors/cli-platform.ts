/**
 * The error catalogue: the command line of `agentcli platform` (ARGS_INVALID, CREDENTIALS_MISSING, CONFLICT, ...).
 * Entries of one area; core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** `--platform-url` that is not an http(s) URL (`example`: the default address). */
export const PlatformUrlFlagInvalid = {
  name: "PlatformUrlFlagInvalid",
  code: "ARGS_INVALID",
  title: "`--platform-url` is not an http(s) URL.",
  message: (v: { value: string }) => `Cannot deploy: --platform-url "${v.value}" is not an http(s) URL`,
  hint: (v: { example: string }) => `Give the control plane's address, e.g. --platform-url ${v.example}.`,
} as const satisfies ErrorData;

/** AGENTCLI_PLATFORM_URL that is not an http(s) URL (`example`: the default address). */
export const PlatformUrlEnvInvalid = {
  name: "PlatformUrlEnvInvalid",
  code: "ENV_INVALID",
  title: "AGENTCLI_PLATFORM_URL is not an http(s) URL.",
  message: (v: { value: string }) => `Cannot deploy: AGENTCLI_PLATFORM_URL "${v.value}" is not an http(s) URL`,
  hint: (v: { example: string }) => `Give the control plane's address, e.g. AGENTCLI_PLATFORM_URL=${v.example}.`,
} as const satisfies ErrorData;

/** `agentcli platform <x>` with an unknown subcommand. */
export const PlatformSubcommandUnknown = {
  name: "PlatformSubcommandUnknown",
  code: "ARGS_INVALID",
  title: "`agentcli platform` got an unknown subcommand.",
  message: (v: { subcommand: string }) => `Cannot run "agentcli platform ${v.subcommand}": unknown subcommand`,
  hint: `Use "agentcli platform serve", "agentcli platform admin" or "agentcli platform usage".`,
} as const satisfies ErrorData;

/** `agentcli platform usage` without the control plane's API key. */
export const PlatformUsageKeyMissing = {
  name: "PlatformUsageKeyMissing",
  code: "CREDENTIALS_MISSING",
  title: "`agentcli platform usage` needs PLATFORM_API_KEY (a key of the control plane).",
  message: "Cannot read the deployment's usage: PLATFORM_API_KEY is not set",
  hint: 'Set PLATFORM_API_KEY to a key from "agentcli platform admin create-key".',
} as const satisfies ErrorData;

/** `agentcli platform serve --mode` other than cloud or self-hosted. */
export const PlatformModeInvalid = {
  name: "PlatformModeInvalid",
  code: "ARGS_INVALID",
  title: "`agentcli platform serve --mode` is neither cloud nor self-hosted.",
  message: (v: { mode: string }) =>
    `Cannot run "agentcli platform serve": --mode "${v.mode}" is not "cloud" or "self-hosted"`,
  hint: "Pass --mode cloud or --mode self-hosted.",
} as const satisfies ErrorData;

/** `agentcli platform serve --public-url` that is not a URL. */
export const PlatformPublicUrlInvalid = {
  name: "PlatformPublicUrlInvalid",
  code: "ARGS_INVALID",
  title: "`agentcli platform serve --public-url` is not a URL.",
  message: (v: { url: string }) => `Cannot run "agentcli platform serve": --public-url "${v.url}" is not a URL`,
  hint: "Pass the address clients reach the control plane at, e.g. --public-url https://agents.example.com.",
} as const satisfies ErrorData;

/** A second `agentcli platform serve` on the embedded database of a running one. */
export const PlatformServeRunning = {
  name: "PlatformServeRunning",
  code: "CONFLICT",
  title: "Another control plane runs on the same embedded database.",
  message: (v: { dataDir: string; pid: number }) =>
    `Cannot run "agentcli platform serve" on "${v.dataDir}": another one (pid ${v.pid}) is running on its embedded database`,
  hint: "Stop that one first, or give this one another --data-dir.",
} as const satisfies ErrorData;

/** `agentcli platform admin <x>` with an unknown action. */
export const PlatformAdminUnknownAction = {
  name: "PlatformAdminUnknownAction",
  code: "ARGS_INVALID",
  title: "`agentcli platform admin` got an unknown action.",
  message: (v: { action: string }) => `Cannot run "agentcli platform admin ${v.action}": unknown action`,
  hint: (v: { actions: string[]; usage: string }) => `Actions: ${v.actions.join(", ")}. Usage: ${v.usage}`,
} as const satisfies ErrorData;

const admin = (action: string) => `Cannot run "agentcli platform admin ${action}"`;

/** An admin action without its positional argument. */
export const PlatformAdminArgMissing = {
  name: "PlatformAdminArgMissing",
  code: "ARGS_INVALID",
  title: "An `agentcli platform admin` action misses its argument.",
  message: (v: { action: string; arg: string }) => `${admin(v.action)}: ${v.arg} is required`,
  hint: (v: { action: string; arg: string }) => `Run "agentcli platform admin ${v.action} ${v.arg}".`,
} as const satisfies ErrorData;

/** An admin action that takes no positional argument got one. */
export const PlatformAdminArgUnexpected = {
  name: "PlatformAdminArgUnexpected",
  code: "ARGS_INVALID",
  title: "An `agentcli platform admin` action that takes no argument got one.",
  message: (v: { action: string; arg: string }) => `${admin(v.action)}: it takes no argument (got "${v.arg}")`,
  hint: 'Pass its values as flags; "agentcli platform admin --help" lists them.',
} as const satisfies ErrorData;

/** An admin action without a flag it needs. */
export const PlatformAdminFlagMissing = {
  name: "PlatformAdminFlagMissing",
  code: "ARGS_INVALID",
  title: "An `agentcli platform admin` action misses a flag it needs.",
  message: (v: { action: string; flag: string }) => `${admin(v.action)}: ${v.flag} is required`,
  hint: 'Add the flag; "agentcli platform admin --help" lists what each action needs.',
} as const satisfies ErrorData;

/** `create-integration --kind` that is neither kind of integration. */
export const PlatformAdminKindInvalid = {
  name: "PlatformAdminKindInvalid",
  code: "ARGS_INVALID",
  title: '`agentcli platform admin create-integration --kind` is not "repohost" or "forge".',
  message: (v: { action: string; kind: string }) =>
    `${admin(v.action)}: --kind "${v.kind}" is not "repohost" or "forge"`,
  hint: "Use --kind repohost (GitHub) or --kind forge (Gitea, Forgejo: with --api-url).",
} as const satisfies ErrorData;

/** A forge integration without the forge's API url. */
export const PlatformAdminApiUrlMissing = {
  name: "PlatformAdminApiUrlMissing",
  code: "ARGS_INVALID",
  title: "`agentcli platform admin create-integration --kind forge` has no --api-url.",
  message: (v: { action: string }) => `${admin(v.action)}: --api-url is required for a forge integration`,
  hint: "Add --api-url with the forge's API address (for example https://forge.example.com/api/v1).",
} as const satisfies ErrorData;

/** `create-listener --compute-type` that is not a compute type a listener may name. */
export const PlatformAdminComputeTypeInvalid = {
  name: "PlatformAdminComputeTypeInvalid",
  code: "ARGS_INVALID",
  title: '`agentcli platform admin create-listener --compute-type` is not "k8s" or "local".',
  message: (v: { action: string; computeType: string }) =>
    `${admin(v.action)}: --compute-type "${v.computeType}" is not "k8s" or "local"`,
  hint: "Use --compute-type k8s (with --kubeconfig) or --compute-type local.",
} as const satisfies ErrorData;

/** `--kubeconfig` names a file that cannot be read. */
export const PlatformKubeconfigUnreadable = {
  name: "PlatformKubeconfigUnreadable",
  code: "ARGS_INVALID",
  title: "`agentcli platform admin --kubeconfig` cannot be read.",
  message: (v: { action: string; path: string }) =>
    `Cannot run "agentcli platform admin ${v.action}": cannot read --kubeconfig "${v.path}"`,
  hint: "Pass the path of a readable kubeconfig file.",
} as const satisfies ErrorData;

/** `create-integration --token-env` names a variable that is not set. */
export const PlatformTokenMissing = {
  name: "PlatformTokenMissing",
  code: "CREDENTIALS_MISSING",
  title: "The variable `--token-env` names is not set.",
  message: (v: { variable: string }) => `Cannot create integration: ${v.variable} is not set`,
  hint: (v: { variable: string }) => `Export the access token as ${v.variable}.`,
} as const satisfies ErrorData;

/** An admin command while `platform serve` holds the embedded database. */
export const PlatformDatabaseBusy = {
  name: "PlatformDatabaseBusy",
  code: "CONFLICT",
  title: "The control plane's embedded database is open in `agentcli platform serve`.",
  message: (v: { dataDir: string; pid: number }) =>
    `Cannot open the control plane's embedded database in "${v.dataDir}": "agentcli platform serve" (pid ${v.pid}) is running on it, and the embedded database opens in one process at a time`,
  hint:
    'Stop "agentcli platform serve" and run the admin command again, or run the control plane on PostgreSQL (DATABASE_URL, for both) so admin commands run beside it.',
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const CLI_PLATFORM_ERRORS: readonly ErrorData[] = [
  PlatformUrlFlagInvalid,
  PlatformUrlEnvInvalid,
  PlatformSubcommandUnknown,
  PlatformUsageKeyMissing,
  PlatformModeInvalid,
  PlatformPublicUrlInvalid,
  PlatformServeRunning,
  PlatformAdminUnknownAction,
  PlatformAdminArgMissing,
  PlatformAdminArgUnexpected,
  PlatformAdminFlagMissing,
  PlatformAdminKindInvalid,
  PlatformAdminApiUrlMissing,
  PlatformAdminComputeTypeInvalid,
  PlatformKubeconfigUnreadable,
  PlatformTokenMissing,
  PlatformDatabaseBusy,
];
