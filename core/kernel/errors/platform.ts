/**
 * The error catalogue: the control plane (UNAUTHORIZED, FORBIDDEN, UNPROCESSABLE, NOT_FOUND, REMOTE_FAILED).. Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md). A resource that does not exist is `NotFound`, a conflict `RequestConflict` (./requests.ts).
 */
import type { ErrorData } from "../errors-data.ts";

/** A control-plane request without valid credentials; `problem` says which (not yet split into entries). */
export const PlatformUnauthorized = {
  name: "PlatformUnauthorized",
  code: "UNAUTHORIZED",
  title: "A control-plane request has no valid API key, signature or bundle token.",
  message: (v: { problem: string }) => v.problem,
  hint:
    'Send X-Api-Key with a key from "agentcli platform admin create-key"; a signed URL or token: ask for a new one.',
} as const satisfies ErrorData;

/** The caller's key may not do this to the resource; `problem` says what (not yet split into entries). */
export const PlatformForbidden = {
  name: "PlatformForbidden",
  code: "FORBIDDEN",
  title: "A control-plane request acts on a resource its caller may not change.",
  message: (v: { problem: string }) => v.problem,
  hint: "Use the key of the resource's owner.",
} as const satisfies ErrorData;

/** A body or upload past a bound of the control plane (HTTP 413); `problem` names the bound and its setting. */
export const PlatformTooLarge = {
  name: "PlatformTooLarge",
  code: "UNPROCESSABLE",
  title: "A request body, upload or captured snapshot is larger than the control plane accepts.",
  message: (v: { problem: string }) => v.problem,
  hint: "Send less, or raise the setting the message names (AGENTCLI_PLATFORM_MAX_*; docs/control-plane.md).",
} as const satisfies ErrorData;

/** A sandbox's machine could not be made (HTTP 503); nothing of it stays behind. */
export const SandboxCreateFailed = {
  name: "SandboxCreateFailed",
  code: "REMOTE_FAILED",
  title: "The control plane could not make a sandbox's machine (a local folder, or a pod on a listener's cluster).",
  message: (v: { name: string; reason: string }) => `Cannot create sandbox "${v.name}": ${v.reason}`,
  hint:
    'On this machine: install the sandbox-local plugin (bubblewrap); on a k8s listener: check its kubeconfig ("agentcli platform admin set-kubeconfig") and the cluster.',
} as const satisfies ErrorData;

/** Packing or reading a sandbox's files for a snapshot failed (HTTP 422). */
export const SnapshotCaptureFailed = {
  name: "SnapshotCaptureFailed",
  code: "REMOTE_FAILED",
  title: "The files of a sandbox could not be captured into a snapshot.",
  message: (v: { name: string; reason: string }) => `Cannot capture sandbox "${v.name}": ${v.reason}`,
  hint: "Check that tar runs in the sandbox and that its working directory is readable.",
} as const satisfies ErrorData;

/** A repository host's API failed or answered something unexpected (HTTP 502). */
export const RepoListingFailed = {
  name: "RepoListingFailed",
  code: "REMOTE_FAILED",
  title: "A repository host's API failed while listing an integration's repositories.",
  message: (v: { integration: string; state: string }) =>
    `Cannot list repositories of integration "${v.integration}": ${v.state}`,
  hint: "Check the integration's API url and token (agentcli platform admin create-integration).",
} as const satisfies ErrorData;

/** A revision's bundle was asked for, but it has none (a container image, or not built yet). */
export const RevisionNoBundle = {
  name: "RevisionNoBundle",
  code: "NOT_FOUND",
  title: "A revision's bundle is asked for, but it runs a container image or has not been built.",
  message: (v: { revision: string; why: string }) => `revision "${v.revision}" has no bundle: ${v.why}`,
  hint: "Wait until the revision is built (GET its status), or deploy a source that builds a bundle.",
} as const satisfies ErrorData;

/** A listener names a `compute_type` no loaded compute plugin declares (HTTP 422). */
export const ListenerComputeTypeUnknown = {
  name: "ListenerComputeTypeUnknown",
  code: "UNPROCESSABLE",
  title: "A listener names a compute type that no compute plugin of the control plane runs.",
  message: (v: { type: string; known: string }) =>
    `compute_type "${v.type}" is not run by this control plane (its compute plugins run ${v.known})`,
  hint:
    'Name one of the types the message lists, or start the control plane with the plugin of kind "compute" that declares the type ("agentcli --plugin <file> platform serve").',
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
export const PLATFORM_ERRORS: readonly ErrorData[] = [
  PlatformUnauthorized,
  PlatformForbidden,
  PlatformTooLarge,
  SandboxCreateFailed,
  SnapshotCaptureFailed,
  RepoListingFailed,
  RevisionNoBundle,
  ListenerComputeTypeUnknown,
];
