/**
 * The error catalogue: release safety on the control plane (issue 37): canaries, promote, abort,
 * and `agentcli deploy --promote/--abort/--rollback` (CONFLICT, NOT_FOUND, DEPLOY_FAILED).
 * Entries of one area; core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of
 * docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/** Promote or abort on a deployment without a running canary. */
export const CanaryNotRunning = {
  name: "CanaryNotRunning",
  code: "CONFLICT",
  title: "Promote or abort asked of a deployment that runs no canary.",
  message: (v: { action: string; name: string }) =>
    `Cannot ${v.action} the canary of deployment "${v.name}": it runs no canary`,
  hint: 'Start one with a new revision whose release has a canary_percent ("agentcli deploy --canary <percent>").',
} as const satisfies ErrorData;

/** Promote or abort while a rollout of the deployment runs. */
export const DeploymentBusy = {
  name: "DeploymentBusy",
  code: "CONFLICT",
  title: "A deployment is in the middle of a rollout.",
  message: (v: { action: string; name: string }) =>
    `Cannot ${v.action} deployment "${v.name}" now: a rollout of it is in progress`,
  hint: "Wait until its newest revision is DEPLOYED, failed or a running canary, then try again.",
} as const satisfies ErrorData;

/** The compute refused to promote the canary (its reason). */
export const CanaryPromoteFailed = {
  name: "CanaryPromoteFailed",
  code: "DEPLOY_FAILED",
  title: "The compute could not switch traffic to the canary.",
  message: (v: { name: string; reason: string }) => `Cannot promote the canary of deployment "${v.name}": ${v.reason}`,
  hint: "The previous revision keeps serving; abort the canary and deploy again.",
} as const satisfies ErrorData;

/** `agentcli deploy` on a project that has no deployment on the control plane yet (promote, abort, rollback). */
export const DeploymentNotDeployed = {
  name: "DeploymentNotDeployed",
  code: "NOT_FOUND",
  title: "The project has no deployment on the control plane.",
  message: (v: { name: string; base: string; action: string }) =>
    `Cannot ${v.action}: "${v.name}" has no deployment on ${v.base}`,
  hint: 'Deploy it first with "agentcli deploy".',
} as const satisfies ErrorData;

/** `agentcli deploy` given more than one of --promote, --abort, --rollback, or one of them with --canary/--gate. */
export const DeployReleaseFlags = {
  name: "DeployReleaseFlags",
  code: "ARGS_INVALID",
  title: "`agentcli deploy` got release options that do not go together.",
  message: (v: { flags: string }) => `Cannot run "agentcli deploy": ${v.flags} do not go together`,
  hint:
    "--promote, --abort and --rollback act on the deployment alone (no new revision); --canary, --gate and --gate-evals go with a new revision.",
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const RELEASE_ERRORS: readonly ErrorData[] = [
  CanaryNotRunning,
  DeploymentBusy,
  CanaryPromoteFailed,
  DeploymentNotDeployed,
  DeployReleaseFlags,
];
