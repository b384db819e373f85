/**
 * The error catalogue: the agent harness (the model, store embeddings, memory, sandboxes, approvals). Entries of
 * one area; core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of docs/errors.md).
 *
 * Errors a tool call meets (the sandbox's) reach the model as the tool's result, hint included, so those
 * entries say what to do in the message and have no hint.
 */
import type { ErrorData } from "../errors-data.ts";

const isAre = (names: string[]) => (names.length > 1 ? "are" : "is");

/** `[agent].model` is unset and no provider's credential is set to choose a default (HTTP 422). */
export const ModelNotChosen = {
  name: "ModelNotChosen",
  code: "CREDENTIALS_MISSING",
  title: "No model is set, and no model provider's credential is set to choose one.",
  message: (v: { tried: string[] }) => `Cannot run the agent: no model is set and none of ${v.tried.join(", ")} is set`,
  hint: (v: { tried: string[] }) =>
    `Add one of ${v.tried.join(", ")} to .env, or set [agent].model = "provider:model" in agent.toml.`,
} as const satisfies ErrorData;

/** A model whose `provider:` prefix no plugin handles. */
export const ModelProviderUnknown = {
  name: "ModelProviderUnknown",
  code: "CONFIG_INVALID",
  title: "No model provider plugin handles the model's provider prefix.",
  message: (v: { prefix: string; model: string }) =>
    `Cannot run the agent: no model provider plugin handles "${v.prefix}" (model "${v.model}")`,
  hint: `Use a model of a built-in provider, e.g. "openai:gpt-5", or load the provider's plugin with --plugin.`,
} as const satisfies ErrorData;

/** The model's provider needs variables that are not set (HTTP 422). */
export const ModelCredentialsMissing = {
  name: "ModelCredentialsMissing",
  code: "CREDENTIALS_MISSING",
  title: "The model's provider needs a credential that is not set.",
  message: (v: { names: string[] }) =>
    `Cannot run the agent: ${v.names.join(" and ")} ${isAre(v.names)} not set; add ${
      v.names.length > 1 ? "them" : "it"
    } to .env`,
  hint: (v: { model: string; needs: string[] }) => `The model "${v.model}" needs ${v.needs.join(", ")}.`,
} as const satisfies ErrorData;

/** AGENTCLI_STORE_EMBEDDINGS names a provider whose variables are not set. */
export const EmbeddingsCredentialsMissing = {
  name: "EmbeddingsCredentialsMissing",
  code: "CREDENTIALS_MISSING",
  title: "The store's embedding provider needs a credential that is not set.",
  message: (v: { spec: string; names: string[] }) =>
    `Cannot start with AGENTCLI_STORE_EMBEDDINGS="${v.spec}": ${v.names.join(" and ")} ${isAre(v.names)} not set`,
  hint: (v: { prefix: string; needs: string[] }) => `The "${v.prefix}" provider needs ${v.needs.join(", ")}.`,
} as const satisfies ErrorData;

/** AGENTCLI_MEMORY names no plugin, or one without a `memory:backend` hook (`found`: the plugin exists). */
export const MemoryPluginMissing = {
  name: "MemoryPluginMissing",
  code: "CONFIG_INVALID",
  title: "AGENTCLI_MEMORY names no memory plugin.",
  message: (v: { plugin: string; found: boolean }) =>
    `Cannot set up memory: ${
      v.found ? `plugin "${v.plugin}" has no "memory:backend" hook` : `no plugin "${v.plugin}"`
    } (AGENTCLI_MEMORY)`,
  hint: (v: { known: string[] }) =>
    `Set AGENTCLI_MEMORY to a memory plugin (${
      v.known.map((k) => `"${k}"`).join(", ") || "none"
    }), or load it with --plugin.`,
} as const satisfies ErrorData;

/** The memory plugin's `memory:backend` hook answered null. */
export const MemoryBackendNone = {
  name: "MemoryBackendNone",
  code: "CONFIG_INVALID",
  title: "The memory plugin gave no memory backend.",
  message: (v: { plugin: string }) => `Cannot set up memory: plugin "${v.plugin}" gave no memory backend`,
  hint: 'Its "memory:backend" hook answered null; report it to the plugin\'s author.',
} as const satisfies ErrorData;

/** The memory plugin's backend failed (HTTP 500: the body names nothing, the server logs it). */
export const MemoryPluginFailed = {
  name: "MemoryPluginFailed",
  code: "PLUGIN_FAILED",
  title: "The memory plugin failed while it ran.",
  message: (v: { plugin: string; reason: string }) => `Cannot use the memory of plugin "${v.plugin}": ${v.reason}`,
} as const satisfies ErrorData;

/** A sandbox whose thread was deleted while the sandbox was being created. */
export const SandboxDeletedWhileCreating = {
  name: "SandboxDeletedWhileCreating",
  code: "PLUGIN_FAILED",
  title: "A sandbox was deleted, with its thread, while it was being created.",
  message: (v: { key: string }) =>
    `Cannot create the sandbox of "${v.key}": it was deleted (with its thread) while being created`,
  hint: "Start a new thread.",
} as const satisfies ErrorData;

/** The sandbox provider's variables are not set. */
export const SandboxCredentialsMissing = {
  name: "SandboxCredentialsMissing",
  code: "PLUGIN_FAILED",
  title: "The sandbox provider needs a credential that is not set.",
  message: (v: { provider: string; names: string[] }) =>
    `Cannot run commands in the "${v.provider}" sandbox: ${v.names.map((m) => `"${m}"`).join(" and ")} ${
      isAre(v.names)
    } not set`,
  hint: (v: { names: string[] }) =>
    `Set ${
      v.names.join(" and ")
    } in the project's .env (or the server's environment), or run the sandboxes on this machine with --sandbox local.`,
} as const satisfies ErrorData;

const noRuntimeHint = (v: { provider: string }) =>
  `Load a plugin that provides the "${v.provider}" sandbox runtime with --plugin, run the sandboxes on this machine with --sandbox local, or set [sandbox].provider = "none".`;

/** `--sandbox <runtime>` chose a runtime whose plugin did not answer `sandbox:create`. */
export const SandboxRuntimeNotInstalled = {
  name: "SandboxRuntimeNotInstalled",
  code: "PLUGIN_FAILED",
  title: "The sandbox runtime chosen with --sandbox is not installed.",
  message: (v: { runtime: string }) => `Cannot run "execute": no sandbox runtime "${v.runtime}" is installed`,
  hint: noRuntimeHint,
} as const satisfies ErrorData;

/** No plugin answered `sandbox:create` for `[sandbox].provider`. */
export const SandboxProviderNotInstalled = {
  name: "SandboxProviderNotInstalled",
  code: "PLUGIN_FAILED",
  title: "No plugin runs the sandboxes of `[sandbox].provider`.",
  message: (v: { provider: string }) =>
    `Cannot run "execute": no runtime for sandbox provider "${v.provider}" is installed (no plugin answered "sandbox:create")`,
  hint: noRuntimeHint,
} as const satisfies ErrorData;

/** `--sandbox <name>` names no sandbox runtime. */
export const SandboxRuntimeUnknown = {
  name: "SandboxRuntimeUnknown",
  code: "ARGS_INVALID",
  title: "`--sandbox` names no sandbox runtime.",
  message: (v: { runtime: string }) => `Cannot use --sandbox "${v.runtime}": no such sandbox runtime`,
  hint: (v: { runtimes: string[] }) =>
    `Use one of ${
      v.runtimes.map((r) => `"${r}"`).join(", ") || "(none installed)"
    }, or leave --sandbox out to use the provider of [sandbox].`,
} as const satisfies ErrorData;

/** A third-party `--sandbox` runtime cannot run on this machine; `problem`/`fix` are its check's own sentence. */
export const SandboxRuntimeCannotRun = {
  name: "SandboxRuntimeCannotRun",
  code: "PLUGIN_FAILED",
  title: "The sandbox runtime chosen with --sandbox cannot run on this machine.",
  message: (v: { runtime: string; problem: string }) => `Cannot use --sandbox "${v.runtime}": ${v.problem}`,
  hint: (v: { fix?: string }) => v.fix ?? "",
} as const satisfies ErrorData;

/** `--sandbox local` on a machine without the bwrap program. */
export const SandboxBwrapMissing = {
  name: "SandboxBwrapMissing",
  code: "PLUGIN_FAILED",
  title: "The local sandbox runtime needs bubblewrap (bwrap), which is not installed.",
  message: (v: { runtime: string }) =>
    `Cannot use --sandbox "${v.runtime}": bubblewrap (the bwrap program) is not installed`,
  hint:
    "Install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap (Arch).",
} as const satisfies ErrorData;

/** `--sandbox local` where bwrap runs but cannot make a sandbox (no unprivileged user namespaces). */
export const SandboxBwrapRefused = {
  name: "SandboxBwrapRefused",
  code: "PLUGIN_FAILED",
  title: "bwrap is installed but cannot create a sandbox on this machine.",
  message: (v: { runtime: string; output: string }) =>
    `Cannot use --sandbox "${v.runtime}": bwrap cannot create a sandbox here: ${v.output}`,
  hint:
    "bwrap needs unprivileged user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ allow bwrap in AppArmor, or set kernel.apparmor_restrict_unprivileged_userns=0).",
} as const satisfies ErrorData;

/** `--sandbox local` with a bad AGENTCLI_SANDBOX_* limit; `problem` is {@link SandboxLimitInvalid}'s message. */
export const SandboxRuntimeSettingInvalid = {
  name: "SandboxRuntimeSettingInvalid",
  code: "PLUGIN_FAILED",
  title: "A setting of the sandbox runtime chosen with --sandbox has a bad value.",
  message: (v: { runtime: string; problem: string }) => `Cannot use --sandbox "${v.runtime}": ${v.problem}`,
  hint: "Fix the variable in the environment (or .env).",
} as const satisfies ErrorData;

/** An AGENTCLI_SANDBOX_* limit of the local runtime that is not a positive number. */
export const SandboxLimitInvalid = {
  name: "SandboxLimitInvalid",
  code: "ENV_INVALID",
  title: "A limit of the local sandbox runtime (AGENTCLI_SANDBOX_*) is not a positive number.",
  message: (v: { name: string; value: string; meaning: string; fallback: number }) =>
    `${v.name}="${v.value}" is not a positive number: set it to the ${v.meaning} (default ${v.fallback})`,
  hint: "Fix the variable in the environment (or .env), or unset it for the default.",
} as const satisfies ErrorData;

/** The local runtime asked for a sandbox outside `agentcli dev` or `serve` (no folder on this machine to use). */
export const SandboxLocalNeedsHost = {
  name: "SandboxLocalNeedsHost",
  code: "PLUGIN_FAILED",
  title: "The local sandbox runtime is used where it has no folder on this machine.",
  message: "the local sandbox runtime needs a directory on this machine (it runs only inside agentcli dev or serve)",
  hint: 'Use it with "agentcli dev --sandbox local" or "agentcli serve --sandbox local", or choose another provider.',
} as const satisfies ErrorData;

/** A run without a thread while `[sandbox].scope = "thread"` (a tool's result). */
export const SandboxNeedsThread = {
  name: "SandboxNeedsThread",
  code: "UNPROCESSABLE",
  title: 'A run without a thread uses the sandbox, and [sandbox].scope = "thread" needs one.',
  message:
    'Cannot use the sandbox: this run has no thread (configurable.thread_id), and [sandbox].scope = "thread" needs one.',
} as const satisfies ErrorData;

/** The project's skills could not be copied into a sandbox (a tool's result). */
export const SandboxSeedFailed = {
  name: "SandboxSeedFailed",
  code: "PLUGIN_FAILED",
  title: "The project's skills cannot be copied into the sandbox.",
  message: (v: { failures: string[] }) => `Cannot copy the skills into the sandbox: ${v.failures.join(", ")}`,
} as const satisfies ErrorData;

/** The sandbox vanished at its provider; a new one replaced it and the call was not made (a tool's result). */
export const SandboxReplaced = {
  name: "SandboxReplaced",
  code: "PLUGIN_FAILED",
  title: "The sandbox vanished at its provider; a new, empty one replaced it and the call was not made.",
  message: (v: { notice: string }) => `${v.notice} Nothing was done; repeat the call if it still makes sense.`,
} as const satisfies ErrorData;

/** A resume of an interrupted run whose decisions do not answer its action requests one to one. */
export const ResumeDecisionsCount = {
  name: "ResumeDecisionsCount",
  code: "UNPROCESSABLE",
  title: "A resume has not one decision per action request.",
  message: (v: { count: number }) =>
    `Cannot resume the run: expected {"decisions": [...]} with ${v.count} decision(s), one per action request`,
} as const satisfies ErrorData;

/** An "edit" decision without a usable `edited_action`. */
export const ResumeEditInvalid = {
  name: "ResumeEditInvalid",
  code: "UNPROCESSABLE",
  title: 'A resume\'s "edit" decision has no edited_action {name, args}.',
  message: (v: { index: number }) =>
    `Cannot resume the run: decision ${v.index} ("edit") needs edited_action {name, args}`,
} as const satisfies ErrorData;

/** A decision of an unknown type. */
export const ResumeDecisionType = {
  name: "ResumeDecisionType",
  code: "UNPROCESSABLE",
  title: "A resume's decision is not approve, edit or reject.",
  message: (v: { index: number; type: string }) =>
    `Cannot resume the run: decision ${v.index} has type ${v.type}; use "approve", "edit" or "reject"`,
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const HARNESS_ERRORS: readonly ErrorData[] = [
  ModelNotChosen,
  ModelProviderUnknown,
  ModelCredentialsMissing,
  EmbeddingsCredentialsMissing,
  MemoryPluginMissing,
  MemoryBackendNone,
  MemoryPluginFailed,
  SandboxDeletedWhileCreating,
  SandboxCredentialsMissing,
  SandboxRuntimeNotInstalled,
  SandboxProviderNotInstalled,
  SandboxRuntimeUnknown,
  SandboxRuntimeCannotRun,
  SandboxBwrapMissing,
  SandboxBwrapRefused,
  SandboxRuntimeSettingInvalid,
  SandboxLimitInvalid,
  SandboxLocalNeedsHost,
  SandboxNeedsThread,
  SandboxSeedFailed,
  SandboxReplaced,
  ResumeDecisionsCount,
  ResumeEditInvalid,
  ResumeDecisionType,
];
