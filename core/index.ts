/**
 * The public API of the `agentcli` package for plugin authors: {@link definePlugin}, the
 * type of every hook point and provider spec, the errors a hook throws to refuse or fail
 * with a status of its own, the helpers identity providers share (bearer tokens,
 * constant-time comparison, a token cache, a JWKS key store), and those a compute that runs
 * processes on its machine needs (whether a process runs, bounding connections per client
 * address). The built-in plugins import
 * only this module, as a third-party plugin does. The contracts are documented in `docs/plugins.md`.
 *
 * @example
 * import { definePlugin, unauthorized } from "agentcli";
 * export default definePlugin({
 *   name: "my-identity",
 *   kind: "identity",
 *   identity: { provider: "my_idp", env: ["MY_IDP_KEY"], frontendEnv: [], signIn: "none", perUser: true, posture: "my_idp tokens" },
 *   hooks: { "auth:authenticate": async ({ request }) => { throw unauthorized("Cannot authenticate request: no token"); } },
 * });
 */
export { CREATE_ONLY, definePlugin, HOOK_MODES, isSandboxNotFound, SandboxNotFoundError } from "./kernel/hooks.ts";
export type * from "./kernel/hooks.ts";
export { AgentcliError, agentcliError, isUserError, userError } from "./kernel/errors.ts";
export type { Diagnostic, ErrorCode } from "./kernel/errors.ts";
export type { ErrorData } from "./kernel/errors-data.ts";
// The built-in deploy targets' catalogue entries (docs/errors.md); a third-party plugin raises its own with userError.
export {
  BundleUploadFailed,
  DeployInterrupted,
  DockerExecutableNotLinux,
  DockerExecutableUnreadable,
  DockerNeedsExecutable,
  PlatformKeyMissing,
  PlatformKeyRefused,
  PlatformRequestFailed,
  PlatformUnreachable,
  RevisionFailed,
} from "./kernel/errors-data.ts";
// The built-in sandbox and compute plugins' entries, and the conformance kit's (bin/testing.ts).
export {
  ConformanceNoProvider,
  ControlPlaneNoPublicUrl,
  DaytonaImageBuildFailed,
  DaytonaSnapshotMissing,
  K8sDeploymentNoListener,
  KubernetesPackagesUnsupported,
  ListenerNoKubeconfig,
  LocalListenerNoImages,
  ModalAppMissing,
  ModalFailed,
  ModalImageBuildFailed,
  ModalQuota,
  ModalServerUrlInvalid,
  ModalTokenMissing,
  ModalTokenRefused,
  ModalUnreachable,
  PlatformSandboxKeyMissing,
  PlatformSandboxUrlMissing,
  RevisionProcessExited,
  RevisionProcessUnhealthy,
  RunloopBlueprintBuildFailed,
  RunloopBlueprintMissing,
  SandboxBwrapFailed,
  SandboxBwrapMissing,
  SandboxBwrapRefused,
  SandboxCgroupFailed,
  SandboxCgroupMoveFailed,
  SandboxLimitInvalid,
  SandboxLocalNeedsHost,
  SandboxRuntimeSettingInvalid,
  SandboxVendorAnswered,
  SandboxVendorDenied,
  SandboxVendorFailed,
  SandboxVendorKeyMissing,
  SandboxVendorKeyRefused,
  SandboxVendorQuota,
  SandboxVendorUnreachable,
} from "./kernel/errors-data.ts";
export { forbidden, identityUnavailable, unauthorized } from "./auth/auth-error.ts";
export { bearerToken, missingBearer } from "./auth/bearer.ts";
export { constantTimeEqual, sha256Hex } from "./auth/constant-time.ts";
export { GATE_TOKEN_ENV } from "./auth/gate.ts";
export { TokenCache } from "./auth/token-cache.ts";
export type { TokenCacheOptions } from "./auth/token-cache.ts";
export { JwksKeyStore } from "./auth/jwks.ts";
export type { JwksKeyStoreOptions } from "./auth/jwks.ts";
export { browserModule } from "./auth/browser.ts";
export type {
  AuthSnapshot,
  BrowserAuthContext,
  BrowserAuthDriver,
  BrowserAuthFactory,
  SignedInUser,
} from "./auth/browser.ts";
export type { AgentConfig, McpServerConfig, SkillInfo, SubagentConfig } from "./kernel/plugin-config.ts";
export { VERSION } from "./kernel/version.ts";
export { processAlive } from "./storage/lock.ts";
// The control plane's client (the `platform` deploy target).
export { DEFAULT_PLATFORM_URL, type PlatformClient, platformClient } from "./platform/client.ts";
export { limitConnectionsPerClient, MAX_CONNECTIONS_PER_CLIENT_VARIABLE } from "./server/host/client-connections.ts";
export { CanarySplit } from "./server/router/canary-split.ts";
export { forwardRequest } from "./server/router/forward.ts";
export type { CanaryRecord, CanaryRoute } from "./server/router/canary-split.ts";
