/**
 * The error catalogue: the built-in sandbox providers and the local runtime's machine (CREDENTIALS_MISSING,
 * ENV_INVALID, PLUGIN_FAILED, REMOTE_FAILED). Most reach the model as a failed tool's result (message and
 * hint), and the log: a message that ends with its fix has no hint besides. Entries of one area; core/kernel/errors-data.ts lists every area (its `ERRORS`, the
 * order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** The `platform` sandbox provider without the control plane's address. */
export const PlatformSandboxUrlMissing = {
  name: "PlatformSandboxUrlMissing",
  code: "ENV_INVALID",
  title: "The platform's sandboxes are used without AGENTCLI_PLATFORM_URL.",
  message: "Cannot reach the platform's sandboxes: AGENTCLI_PLATFORM_URL is not set (the control plane's address)",
  hint: "Set AGENTCLI_PLATFORM_URL to the control plane's address (a deployment of the control plane has it set).",
} as const satisfies ErrorData;

/** The `platform` sandbox provider without an API key of the control plane. */
export const PlatformSandboxKeyMissing = {
  name: "PlatformSandboxKeyMissing",
  code: "CREDENTIALS_MISSING",
  title: "The platform's sandboxes are used without an API key.",
  message: "Cannot reach the platform's sandboxes: PLATFORM_API_KEY is not set",
  hint: 'Set PLATFORM_API_KEY (or AGENTCLI_PLATFORM_SANDBOX_KEY) to a key from "agentcli platform admin create-key".',
} as const satisfies ErrorData;

/** A vendor's sandbox (Daytona, Runloop) without its API key. */
export const SandboxVendorKeyMissing = {
  name: "SandboxVendorKeyMissing",
  code: "CREDENTIALS_MISSING",
  title: "A sandbox vendor's API key is not set.",
  message: (v: { vendor: string; variable: string }) =>
    `Cannot use the ${v.vendor} sandbox: ${v.variable} is not set. Set it in the project's .env (or the server's environment).`,
  hint: (v: { keysUrl: string }) => `Create a key at ${v.keysUrl}.`,
} as const satisfies ErrorData;

/** Modal (sandbox_b) without its token id or secret. */
export const ModalTokenMissing = {
  name: "ModalTokenMissing",
  code: "CREDENTIALS_MISSING",
  title: "Modal's token (SANDBOX_B_TOKEN_ID, SANDBOX_B_TOKEN_SECRET) is not set.",
  message: (v: { missing: string[]; variables: string }) =>
    `Cannot reach Modal (sandbox_b): ${v.missing.join(" and ")} ${
      v.missing.length > 1 ? "are" : "is"
    } not set. Create a token with "modal token new" (or at https://modal.com/settings/tokens) and set ${v.variables}.`,
} as const satisfies ErrorData;

/** SANDBOX_B_SERVER_URL that is not an http(s) URL. */
export const ModalServerUrlInvalid = {
  name: "ModalServerUrlInvalid",
  code: "ENV_INVALID",
  title: "SANDBOX_B_SERVER_URL is not an http(s) URL.",
  message: (v: { value: string; fallback: string }) =>
    `SANDBOX_B_SERVER_URL="${v.value}" is not an http(s) URL (Modal's API address; leave it unset for ${v.fallback})`,
  hint: "Fix SANDBOX_B_SERVER_URL, or unset it.",
} as const satisfies ErrorData;

/** [sandbox].template names a Modal App that does not exist. */
export const ModalAppMissing = {
  name: "ModalAppMissing",
  code: "CONFIG_INVALID",
  title: "[sandbox].template names a Modal App the workspace does not have.",
  message: (v: { template: string; where: string; fallback: string }) =>
    `Modal has no App "${v.template}" ([sandbox].template names the Modal App sandboxes are created in): create or deploy it in your workspace${v.where}, or remove template to use "${v.fallback}", which is created on first use.`,
} as const satisfies ErrorData;

/** Modal could not build [sandbox].image. */
export const ModalImageBuildFailed = {
  name: "ModalImageBuildFailed",
  code: "REMOTE_FAILED",
  title: "Modal could not build the sandbox's image.",
  message: (v: { image: string; reason: string }) =>
    `Modal could not build [sandbox].image "${v.image}": ${v.reason}. Use an image name a registry serves (for example python:3), with its tag.`,
} as const satisfies ErrorData;

/** Runloop could not build a blueprint from [sandbox].image. */
export const RunloopBlueprintBuildFailed = {
  name: "RunloopBlueprintBuildFailed",
  code: "REMOTE_FAILED",
  title: "Runloop could not build a blueprint from the sandbox's image.",
  message: (v: { image: string; state: string }) =>
    `Cannot create the Runloop devbox: Runloop could not build a blueprint from image "${v.image}" ([sandbox].image)${v.state}. Use an image Runloop can pull (a public registry image such as python:3), or name a built Runloop blueprint in [sandbox].template.`,
} as const satisfies ErrorData;

/** [sandbox].template names a Runloop blueprint that is not built. */
export const RunloopBlueprintMissing = {
  name: "RunloopBlueprintMissing",
  code: "CONFIG_INVALID",
  title: "[sandbox].template names a Runloop blueprint that does not exist or is not built.",
  message: (v: { template: string; detail: string }) =>
    `Cannot create the Runloop devbox: Runloop has no built blueprint "${v.template}" ([sandbox].template) (${v.detail}). Build the blueprint in Runloop, fix [sandbox].template, or remove it to create devboxes from [sandbox].image.`,
} as const satisfies ErrorData;

/** [sandbox].template names a Daytona snapshot that does not exist. */
export const DaytonaSnapshotMissing = {
  name: "DaytonaSnapshotMissing",
  code: "CONFIG_INVALID",
  title: "[sandbox].template names a Daytona snapshot that does not exist.",
  message: (v: { template: string; detail: string }) =>
    `Cannot create the Daytona sandbox: Daytona has no snapshot "${v.template}" ([sandbox].template) (${v.detail}). Create the snapshot in Daytona (dashboard, Snapshots), fix [sandbox].template, or remove it to create sandboxes from [sandbox].image.`,
} as const satisfies ErrorData;

/** Daytona could not build a sandbox from [sandbox].image. */
export const DaytonaImageBuildFailed = {
  name: "DaytonaImageBuildFailed",
  code: "REMOTE_FAILED",
  title: "Daytona could not build a sandbox from the sandbox's image.",
  message: (v: { image: string; reason: string }) =>
    `Cannot create the Daytona sandbox: Daytona could not build it from image "${v.image}" ([sandbox].image): ${v.reason}. Use an image Daytona can pull (a public registry image such as python:3), or name a Daytona snapshot in [sandbox].template.`,
} as const satisfies ErrorData;

/** A sandbox vendor (Daytona, Runloop) refused the API key (HTTP 401). */
export const SandboxVendorKeyRefused = {
  name: "SandboxVendorKeyRefused",
  code: "REMOTE_FAILED",
  title: "A sandbox vendor refused the API key.",
  message: (v: { doing: string; vendor: string; variable: string; raw: string; keysUrl: string }) =>
    `${v.doing}: ${v.vendor} refused the API key in ${v.variable} (401 ${v.raw}). Set ${v.variable} to a valid key (create one at ${v.keysUrl}).`,
} as const satisfies ErrorData;

/** A sandbox vendor refused for a quota or plan limit. */
export const SandboxVendorQuota = {
  name: "SandboxVendorQuota",
  code: "REMOTE_FAILED",
  title: "A sandbox vendor refused: a quota or a limit of the plan is reached.",
  message: (v: { doing: string; vendor: string; status: number; raw: string }) =>
    `${v.doing}: ${v.vendor} quota exceeded (${v.status} ${v.raw}). Delete or stop sandboxes you no longer need (agentcli stops idle ones after AGENTCLI_SANDBOX_IDLE_SECONDS), or raise the limits of your ${v.vendor} plan.`,
} as const satisfies ErrorData;

/** A sandbox vendor denied the request (HTTP 403): the key lacks a permission. */
export const SandboxVendorDenied = {
  name: "SandboxVendorDenied",
  code: "REMOTE_FAILED",
  title: "A sandbox vendor denied a request the API key may not make.",
  message: (v: { doing: string; vendor: string; variable: string; raw: string }) =>
    `${v.doing}: ${v.vendor} denied the request (403 ${v.raw}). Check that the key in ${v.variable} has the permissions to manage sandboxes.`,
} as const satisfies ErrorData;

/** A sandbox vendor's API cannot be reached. */
export const SandboxVendorUnreachable = {
  name: "SandboxVendorUnreachable",
  code: "REMOTE_FAILED",
  title: "A sandbox vendor's API cannot be reached.",
  message: (v: { doing: string; vendor: string; url: string; raw: string; urlVariable: string }) =>
    `${v.doing}: cannot reach ${v.vendor} at ${v.url} (${v.raw}). Check the network, or ${v.urlVariable} if you set it.`,
} as const satisfies ErrorData;

/** A sandbox vendor's SDK failed without an answer of the vendor; `raw` is its message. */
export const SandboxVendorFailed = {
  name: "SandboxVendorFailed",
  code: "REMOTE_FAILED",
  title: "A sandbox vendor's SDK failed without an answer from the vendor.",
  message: (v: { doing: string; raw: string }) => `${v.doing}: ${v.raw}`,
  hint: "Try again; if it fails again, the vendor's status page or SDK changelog may say why.",
} as const satisfies ErrorData;

/** A sandbox vendor answered another error status. */
export const SandboxVendorAnswered = {
  name: "SandboxVendorAnswered",
  code: "REMOTE_FAILED",
  title: "A sandbox vendor answered a call with an error.",
  message: (v: { doing: string; vendor: string; status: number; raw: string }) =>
    `${v.doing}: ${v.vendor} answered ${v.status}: ${v.raw}`,
  hint: "Try again; if it fails again, the vendor's status page may say why.",
} as const satisfies ErrorData;

/** Modal refused the token (unauthenticated, or no permission). */
export const ModalTokenRefused = {
  name: "ModalTokenRefused",
  code: "REMOTE_FAILED",
  title: "Modal refused the token.",
  message: (v: { doing: string; detail: string; variables: string }) =>
    `Modal rejected the token while ${v.doing}: ${v.detail}. Check ${v.variables} (a token of your Modal workspace, from "modal token new").`,
} as const satisfies ErrorData;

/** Modal refused for the workspace's limits. */
export const ModalQuota = {
  name: "ModalQuota",
  code: "REMOTE_FAILED",
  title: "Modal refused: the workspace's limits are reached.",
  message: (v: { doing: string; detail: string }) =>
    `Modal refused while ${v.doing}: quota exceeded (${v.detail}). Wait for running sandboxes to end, terminate unused ones (modal sandbox list), or raise your workspace's limits.`,
} as const satisfies ErrorData;

/** Modal's API cannot be reached. */
export const ModalUnreachable = {
  name: "ModalUnreachable",
  code: "REMOTE_FAILED",
  title: "Modal's API cannot be reached.",
  message: (v: { url: string; doing: string; detail: string }) =>
    `Cannot reach Modal at ${v.url} while ${v.doing}: ${v.detail}. Check the network, or SANDBOX_B_SERVER_URL if you set it.`,
} as const satisfies ErrorData;

/** Another failure of Modal's API. */
export const ModalFailed = {
  name: "ModalFailed",
  code: "REMOTE_FAILED",
  title: "A call to Modal's API failed.",
  message: (v: { doing: string; detail: string }) => `Modal failed while ${v.doing}: ${v.detail}`,
  hint: "Try again; if it fails again, Modal's status page may say why.",
} as const satisfies ErrorData;

/** The local runtime could not make a sandbox's cgroup (its limits). */
export const SandboxCgroupFailed = {
  name: "SandboxCgroupFailed",
  code: "PLUGIN_FAILED",
  title: "The local sandbox runtime could not set up a sandbox's cgroup (its memory, process and CPU limits).",
  message: (v: { id: string; reason: string }) => `Cannot set up the cgroup of sandbox ${v.id}: ${v.reason}`,
  hint: "agentcli needs a delegated cgroup v2 subtree (systemd: Delegate=yes) or root to enforce the limits.",
} as const satisfies ErrorData;

/** The local runtime could not move a command into its sandbox's cgroup. */
export const SandboxCgroupMoveFailed = {
  name: "SandboxCgroupMoveFailed",
  code: "PLUGIN_FAILED",
  title: "The local sandbox runtime could not put a command into its sandbox's cgroup.",
  message: (v: { reason: string }) => `Cannot move a sandbox command into its cgroup: ${v.reason}`,
  hint: "agentcli needs a delegated cgroup v2 subtree (systemd: Delegate=yes) or root to enforce the limits.",
} as const satisfies ErrorData;

/** bwrap itself failed to make a command's sandbox (a mount it cannot make); `output` is its stderr. */
export const SandboxBwrapFailed = {
  name: "SandboxBwrapFailed",
  code: "PLUGIN_FAILED",
  title: "bwrap could not set up a sandbox command (a mount or namespace it cannot make).",
  message: (v: { output: string }) => v.output,
  hint: 'Check that "agentcli dev --sandbox local" starts without an error here; bwrap\'s message names what failed.',
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const SANDBOX_ERRORS: readonly ErrorData[] = [
  PlatformSandboxUrlMissing,
  PlatformSandboxKeyMissing,
  SandboxVendorKeyMissing,
  ModalTokenMissing,
  ModalServerUrlInvalid,
  ModalAppMissing,
  ModalImageBuildFailed,
  RunloopBlueprintBuildFailed,
  RunloopBlueprintMissing,
  DaytonaSnapshotMissing,
  DaytonaImageBuildFailed,
  SandboxVendorKeyRefused,
  SandboxVendorQuota,
  SandboxVendorDenied,
  SandboxVendorUnreachable,
  SandboxVendorFailed,
  SandboxVendorAnswered,
  ModalTokenRefused,
  ModalQuota,
  ModalUnreachable,
  ModalFailed,
  SandboxCgroupFailed,
  SandboxCgroupMoveFailed,
  SandboxBwrapFailed,
];
