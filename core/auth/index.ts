/** Authentication of a deployed agent: the authenticator, public paths, auth errors, the dev bypass, post-deploy setup. */
export { createAuthenticator, identityPluginFor, PLATFORM_DEFAULT_PROVIDER } from "./authenticator.ts";
export type { Authenticate, AuthenticatorOptions } from "./authenticator.ts";
export { isPublicPath } from "./public-paths.ts";
export {
  authChallenge,
  authErrorResponse,
  forbidden,
  identityUnavailable,
  isAuthError,
  unauthorized,
} from "./auth-error.ts";
export { bearerToken, missingBearer } from "./bearer.ts";
export { constantTimeEqual, sha256Hex } from "./constant-time.ts";
export { TokenCache } from "./token-cache.ts";
export { JwksKeyStore } from "./jwks.ts";
export { DEFAULT_DEV_USER, DEV_BYPASS_ENV, DEV_USER_HEADER, devAuthBanner, devBypassEnabled } from "./dev-bypass.ts";
export { postDeploySetup } from "./post-deploy.ts";
export { GATE_HEADER, GATE_IDENTITY_PREFIX, GATE_TOKEN_ENV, GATE_USER_HEADER, gateUser } from "./gate.ts";
