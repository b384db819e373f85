/**
 * The error catalogue: the control plane (UNAUTHORIZED, FORBIDDEN, UNPROCESSABLE, CONFLICT, NOT_FOUND, REMOTE_FAILED). Entries of one area; core/kernel/errors-data.ts lists every area
 * (its `ERRORS`, the order of docs/errors.md). A resource that does not exist is `NotFound` (./requests.ts). The 413s are UNPROCESSABLE with `{ status: 413 }` at the call site.
 */
import type { ErrorData } from "../errors-data.ts";

/** A control-plane request without an X-Api-Key header. */
export const PlatformApiKeyHeaderMissing = {
  name: "PlatformApiKeyHeaderMissing",
  code: "UNAUTHORIZED",
  title: "A control-plane request has no X-Api-Key header.",
  message: "Cannot authenticate: the X-Api-Key header is missing",
  hint: 'Send X-Api-Key with a key from "agentcli platform admin create-key".',
} as const satisfies ErrorData;

/** An X-Api-Key that is no key of the control plane (unknown or revoked). */
export const PlatformApiKeyInvalid = {
  name: "PlatformApiKeyInvalid",
  code: "UNAUTHORIZED",
  title: "A control-plane request's API key is unknown or revoked.",
  message: "Cannot authenticate: the API key is not valid",
  hint: 'Check the key (a revoked key stays refused); make a new one with "agentcli platform admin create-key".',
} as const satisfies ErrorData;

/** A bundle download with neither an API key nor a bundle token. */
export const PlatformBundleCredentialsMissing = {
  name: "PlatformBundleCredentialsMissing",
  code: "UNAUTHORIZED",
  title: "A bundle download has no API key and no bundle token.",
  message: "Cannot authenticate: send X-Api-Key, or Authorization: Bearer <the deployment's bundle token>",
  hint: "A listener's pods read the bundle token from the deployment's Kubernetes Secret; others send their API key.",
} as const satisfies ErrorData;

/** A bundle token of another deployment (or no bundle token at all). */
export const PlatformBundleTokenInvalid = {
  name: "PlatformBundleTokenInvalid",
  code: "UNAUTHORIZED",
  title: "A bundle download's token is not the bundle token of that deployment.",
  message: "Cannot download the bundle: the bundle token does not belong to this deployment",
  hint: "Send the bundle token of the deployment the URL names (its Kubernetes Secret holds it), or an API key.",
} as const satisfies ErrorData;

/** An upload URL whose signature was changed or made with another secret. */
export const PlatformUploadSignatureInvalid = {
  name: "PlatformUploadSignatureInvalid",
  code: "UNAUTHORIZED",
  title: "An upload URL's signature does not match.",
  message: "Cannot accept the upload: the signature does not match; ask for a new upload URL",
  hint: "Ask for a new upload URL (POST /v2/deployments/{id}/upload-url) and PUT to it unchanged.",
} as const satisfies ErrorData;

/** An upload URL past its hour. */
export const PlatformUploadUrlExpired = {
  name: "PlatformUploadUrlExpired",
  code: "UNAUTHORIZED",
  title: "An upload URL has expired (it is good for an hour).",
  message: "Cannot accept the upload: the upload URL expired; ask for a new one",
  hint: "Ask for a new upload URL (POST /v2/deployments/{id}/upload-url).",
} as const satisfies ErrorData;

/** A push webhook whose signature is not the integration's webhook secret's. */
export const PlatformWebhookSignatureInvalid = {
  name: "PlatformWebhookSignatureInvalid",
  code: "UNAUTHORIZED",
  title: "A push webhook is not signed with its integration's webhook secret.",
  message: "Cannot accept the webhook: the signature does not match the integration's webhook secret",
  hint:
    'Set the webhook\'s secret on the repository host to the one "agentcli platform admin create-integration" printed.',
} as const satisfies ErrorData;

/** Changing a token's metadata with another user's key. */
export const PlatformTokenNotOwner = {
  name: "PlatformTokenNotOwner",
  code: "FORBIDDEN",
  title: "A token's metadata is changed by a user who does not own the token.",
  message: (v: { token: string }) => `Cannot update token "${v.token}": only its owner may change its metadata`,
  hint: "Use the API key of the token's owner.",
} as const satisfies ErrorData;

/** A request body past `maxBodyBytes` (HTTP 413); `limit` is the bound and its setting. */
export const PlatformBodyTooLarge = {
  name: "PlatformBodyTooLarge",
  code: "UNPROCESSABLE",
  title: "A control-plane request's body is larger than the control plane accepts.",
  message: (v: { limit: string }) => `Cannot accept the request: the body is larger than ${v.limit}`,
  hint: "Send a smaller body, or raise the setting the message names (docs/control-plane.md).",
} as const satisfies ErrorData;

/** An upload whose Content-Length is past `maxUploadBytes` (HTTP 413). */
export const PlatformUploadDeclaredTooLarge = {
  name: "PlatformUploadDeclaredTooLarge",
  code: "UNPROCESSABLE",
  title: "An upload declares more bytes than the control plane accepts.",
  message: (v: { bytes: number; limit: string }) =>
    `Cannot accept the upload: ${v.bytes} bytes is larger than ${v.limit}`,
  hint: "Upload a smaller bundle (leave large files out of it), or raise the setting the message names.",
} as const satisfies ErrorData;

/** An upload that streamed past `maxUploadBytes` (HTTP 413). */
export const PlatformUploadTooLarge = {
  name: "PlatformUploadTooLarge",
  code: "UNPROCESSABLE",
  title: "An upload is larger than the control plane accepts.",
  message: (v: { limit: string }) => `Cannot accept the upload: it is larger than ${v.limit}`,
  hint: "Upload a smaller bundle (leave large files out of it), or raise the setting the message names.",
} as const satisfies ErrorData;

/** An upload whose archive unpacks past `maxUnpackedBytes` (HTTP 413). */
export const PlatformUploadUnpacksTooLarge = {
  name: "PlatformUploadUnpacksTooLarge",
  code: "UNPROCESSABLE",
  title: "An uploaded archive unpacks to more than the control plane accepts.",
  message: (v: { limit: string }) => `Cannot accept the upload: it unpacks to more than ${v.limit}`,
  hint: "Upload a smaller bundle (leave large files out of it), or raise the setting the message names.",
} as const satisfies ErrorData;

/** An upload whose archive holds more than `maxArchiveEntries` entries (HTTP 413). */
export const PlatformUploadTooManyEntries = {
  name: "PlatformUploadTooManyEntries",
  code: "UNPROCESSABLE",
  title: "An uploaded archive holds more entries than the control plane accepts.",
  message: (v: { limit: string }) => `Cannot accept the upload: the archive holds more than ${v.limit} entries`,
  hint: "Upload a bundle with fewer files, or raise the setting the message names.",
} as const satisfies ErrorData;

/** A snapshot of a sandbox whose files are past `maxUploadBytes` (HTTP 413). */
export const SnapshotTooLarge = {
  name: "SnapshotTooLarge",
  code: "UNPROCESSABLE",
  title: "A sandbox's files are larger than a snapshot may hold.",
  message: (v: { name: string; limit: string }) =>
    `Cannot capture sandbox "${v.name}": its files are larger than ${v.limit}`,
  hint: "Remove files from the sandbox's working directory, or raise the setting the message names.",
} as const satisfies ErrorData;

/** A request that lists invalid fields (HTTP 422, `detail` lists each: loc, msg, type). */
export const PlatformRequestInvalid = {
  name: "PlatformRequestInvalid",
  code: "UNPROCESSABLE",
  title: "A control-plane request's body, query or path has fields that are not valid.",
  message: (v: { fields: string }) => `Cannot accept the request: ${v.fields}`,
  hint: "Fix each field the answer's detail lists (loc is the field's place); docs/control-plane.md has the API.",
} as const satisfies ErrorData;

/** Two requests raced past the same uniqueness check; the database refused the second. */
export const PlatformUniqueNameTaken = {
  name: "PlatformUniqueNameTaken",
  code: "CONFLICT",
  title: "A resource is created with a name another one took at the same moment.",
  message: "Cannot create the resource: one with the same unique name exists",
  hint: "Choose another name, or use the resource that exists.",
} as const satisfies ErrorData;

/** Creating a deployment whose name the tenant uses. */
export const DeploymentNameTaken = {
  name: "DeploymentNameTaken",
  code: "CONFLICT",
  title: "A deployment is created with a name the tenant already uses.",
  message: (v: { name: string }) => `Cannot create deployment "${v.name}": a deployment with this name exists`,
  hint: "Choose another name, or patch the deployment that has it.",
} as const satisfies ErrorData;

/** Patching, redeploying or uploading to a deployment that is being deleted. */
export const DeploymentBeingDeleted = {
  name: "DeploymentBeingDeleted",
  code: "CONFLICT",
  title: "A deployment that is being deleted is changed.",
  message: (v: { action: string; name: string }) => `Cannot ${v.action} deployment "${v.name}": it is being deleted`,
  hint: "Wait until it is gone, then create the deployment again.",
} as const satisfies ErrorData;

/** A deployment's usage asked of the control plane while the deployment cannot answer (no URL, no key, unreachable). */
export const DeploymentUsageUnavailable = {
  name: "DeploymentUsageUnavailable",
  code: "CONFLICT",
  title: "The control plane cannot read a deployment's usage from the deployment.",
  message: (v: { name: string; why: string }) => `Cannot read the usage of deployment "${v.name}": ${v.why}`,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** A rollback to a revision that never served. */
export const RevisionNeverServed = {
  name: "RevisionNeverServed",
  code: "CONFLICT",
  title: "A rollback names a revision that never reached DEPLOYED.",
  message: (v: { revision: string; status: string }) =>
    `Cannot redeploy revision "${v.revision}": it is ${v.status} and never served; only a revision that reached DEPLOYED (serving now, or superseded since) can be rolled back to`,
  hint: "List the deployment's revisions and pick one that has a deployed_at.",
} as const satisfies ErrorData;

/** `agentcli platform admin create-tenant` with a name in use. */
export const TenantExists = {
  name: "TenantExists",
  code: "CONFLICT",
  title: "A tenant is created with a name in use.",
  message: (v: { name: string; id: string }) => `Cannot create tenant "${v.name}": it already exists (id ${v.id})`,
  hint: 'Choose another name, or use the tenant that exists ("agentcli platform admin list-tenants").',
} as const satisfies ErrorData;

/** A listener with a compute_id another listener of the tenant has. */
export const ListenerComputeIdTaken = {
  name: "ListenerComputeIdTaken",
  code: "CONFLICT",
  title: "A listener is created with a compute_id another listener has.",
  message: (v: { computeId: string }) =>
    `Cannot create listener: compute_id "${v.computeId}" is already used by another listener`,
  hint: "Give each listener its own compute_id.",
} as const satisfies ErrorData;

/** Creating a sandbox whose name the tenant uses. */
export const SandboxNameTaken = {
  name: "SandboxNameTaken",
  code: "CONFLICT",
  title: "A sandbox is created with a name in use.",
  message: (v: { name: string }) => `Cannot create sandbox "${v.name}": a sandbox of that name exists`,
  hint: "Choose another name, or delete the sandbox that has it.",
} as const satisfies ErrorData;

/** Renaming a sandbox to a name in use. */
export const SandboxRenameTaken = {
  name: "SandboxRenameTaken",
  code: "CONFLICT",
  title: "A sandbox is renamed to a name in use.",
  message: (v: { name: string; to: string }) => `Cannot rename sandbox "${v.name}": "${v.to}" is taken`,
  hint: "Choose another name.",
} as const satisfies ErrorData;

/** Creating a snapshot whose name the tenant uses. */
export const SnapshotNameTaken = {
  name: "SnapshotNameTaken",
  code: "CONFLICT",
  title: "A snapshot is created with a name in use.",
  message: (v: { name: string }) => `Cannot create snapshot "${v.name}": a snapshot of that name exists`,
  hint: "Choose another name, or delete the snapshot that has it.",
} as const satisfies ErrorData;

/** A second PUT to an upload URL: an upload is never replaced. */
export const UploadUrlUsed = {
  name: "UploadUrlUsed",
  code: "CONFLICT",
  title: "An upload URL is used a second time (an upload is never replaced).",
  message: (v: { deployment: string }) =>
    `Cannot accept the upload: this upload URL was already used, and an upload is never replaced; ask for a new one (POST /v2/deployments/${v.deployment}/upload-url) and name its object_path in a new revision`,
  hint: "Ask for a new upload URL and name its object_path in a new revision.",
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
  DeploymentUsageUnavailable,
  PlatformApiKeyHeaderMissing,
  PlatformApiKeyInvalid,
  PlatformBundleCredentialsMissing,
  PlatformBundleTokenInvalid,
  PlatformUploadSignatureInvalid,
  PlatformUploadUrlExpired,
  PlatformWebhookSignatureInvalid,
  PlatformTokenNotOwner,
  PlatformBodyTooLarge,
  PlatformUploadDeclaredTooLarge,
  PlatformUploadTooLarge,
  PlatformUploadUnpacksTooLarge,
  PlatformUploadTooManyEntries,
  SnapshotTooLarge,
  PlatformRequestInvalid,
  PlatformUniqueNameTaken,
  DeploymentNameTaken,
  DeploymentBeingDeleted,
  RevisionNeverServed,
  TenantExists,
  ListenerComputeIdTaken,
  SandboxNameTaken,
  SandboxRenameTaken,
  SnapshotNameTaken,
  UploadUrlUsed,
  SandboxCreateFailed,
  SnapshotCaptureFailed,
  RepoListingFailed,
  RevisionNoBundle,
  ListenerComputeTypeUnknown,
];
