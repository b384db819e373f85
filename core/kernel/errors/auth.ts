/**
 * The error catalogue: Authentication (UNAUTHORIZED, FORBIDDEN, REMOTE_FAILED, CONFIG_INVALID, ...): the refusals
 * core/auth/auth-error.ts raises for identity plugins, and the authenticator's set-up. Entries of one area;
 * core/kernel/errors-data.ts lists every area (its `ERRORS`, the order of docs/errors.md).
 */
import type { ErrorData } from "../errors-data.ts";

/**
 * A 401 (`unauthorized()`, the public helper of identity plugins): `problem` is the plugin's
 * sentence ("Cannot authenticate request: no token"), `fix` its hint.
 */
export const Unauthorized = {
  name: "Unauthorized",
  code: "UNAUTHORIZED",
  title: "A request carries no credentials, or credentials that do not hold.",
  message: (v: { problem: string }) => v.problem,
  hint: (v: { fix?: string }) => v.fix ?? "",
} as const satisfies ErrorData;

/** A 403 (`forbidden()`): the caller is known but may not do this; `problem` and `fix` as for {@link Unauthorized}. */
export const Forbidden = {
  name: "Forbidden",
  code: "FORBIDDEN",
  title: "The caller is known but may not do this.",
  message: (v: { problem: string }) => v.problem,
  hint: (v: { fix?: string }) => v.fix ?? "",
} as const satisfies ErrorData;

/** A 503 (`identityUnavailable()`): the identity provider cannot be reached, so nothing is let through. */
export const IdentityUnavailable = {
  name: "IdentityUnavailable",
  code: "REMOTE_FAILED",
  title: "The identity provider cannot be reached; requests are refused until it answers (HTTP 503).",
  message: (v: { problem: string }) => v.problem,
  hint: (v: { fix: string }) => v.fix,
} as const satisfies ErrorData;

/** No identity plugin provides the platform default (no [auth] section). */
export const AuthDefaultProviderMissing = {
  name: "AuthDefaultProviderMissing",
  code: "CONFIG_INVALID",
  title: "No plugin provides the platform's default identity.",
  message: (v: { provider: string }) =>
    `Cannot set up authentication: no plugin provides the platform default "${v.provider}"`,
  hint: "Register plugins/identity/platform_key.ts, or add an [auth] section.",
} as const satisfies ErrorData;

/** `[auth].provider` names no identity plugin. */
export const AuthProviderUnknown = {
  name: "AuthProviderUnknown",
  code: "CONFIG_INVALID",
  title: "`[auth].provider` names no identity plugin.",
  message: (v: { provider: string }) => `Cannot set up authentication: no identity plugin provides "${v.provider}"`,
  hint: (v: { known: string[] }) =>
    `Use one of ${v.known.map((k) => `"${k}"`).join(", ")} in [auth].provider, or load the plugin that provides it.`,
} as const satisfies ErrorData;

/** An identity plugin without its `auth:authenticate` hook. */
export const AuthHookMissing = {
  name: "AuthHookMissing",
  code: "PLUGIN_INVALID",
  title: 'An identity plugin has no "auth:authenticate" hook.',
  message: (v: { plugin: string }) =>
    `Cannot set up authentication: identity plugin "${v.plugin}" has no "auth:authenticate" hook`,
  hint: 'An identity plugin must implement hooks["auth:authenticate"].',
} as const satisfies ErrorData;

/** The identity provider's variables are not set when the server starts. */
export const AuthCredentialsMissing = {
  name: "AuthCredentialsMissing",
  code: "CREDENTIALS_MISSING",
  title: "The variables the identity provider needs are not set.",
  message: (v: { provider: string; names: string[] }) =>
    `Cannot start the agent server with auth "${v.provider}": ${v.names.map((m) => `"${m}"`).join(", ")} ${
      v.names.length === 1 ? "is" : "are"
    } not set`,
  hint: (v: { names: string[] }) => `Set ${v.names.join(", ")} in the project's .env or the deployment's secrets.`,
} as const satisfies ErrorData;

/** This area's entries, in the order docs/errors.md lists them. */
/** `auth.path` / `HostOptions.langgraphAuth`: the module does not load, or its export is missing. */
export const LangGraphAuthNotLoaded = {
  name: "LangGraphAuthNotLoaded",
  code: "CONFIG_INVALID",
  title: "The LangGraph auth module (`auth.path`) cannot be loaded.",
  message: (v: { module: string; exportName: string; reason: string }) =>
    `Cannot load LangGraph auth "${v.module}:${v.exportName}": ${v.reason}`,
  hint:
    "Point auth.path at a module exporting an Auth instance of @langchain/langgraph-sdk/auth, as './src/auth.ts:auth'.",
} as const satisfies ErrorData;

/** The export of the LangGraph auth module is not an `Auth` instance. */
export const LangGraphAuthNotAuth = {
  name: "LangGraphAuthNotAuth",
  code: "CONFIG_INVALID",
  title: "The export named by `auth.path` is not an `Auth` instance.",
  message: (v: { module: string; exportName: string; found: string }) =>
    `LangGraph auth "${v.module}:${v.exportName}" is ${v.found}, not an Auth instance`,
  hint: "Export `new Auth().authenticate(...)` from @langchain/langgraph-sdk/auth under that name.",
} as const satisfies ErrorData;

/**
 * A LangGraph auth handler threw an `HTTPException` other than 401/403 (those are
 * {@link Unauthorized} and {@link Forbidden}): its status is the answer's, `problem` its message.
 */
export const LangGraphAuthRefused = {
  name: "LangGraphAuthRefused",
  code: "FORBIDDEN",
  title: "A LangGraph auth handler refused the request with a status of its own.",
  message: (v: { problem: string }) => v.problem,
} as const satisfies ErrorData;

/** A LangGraph auth handler answered something LangGraph does not accept (HTTP 500, as LangGraph's server). */
export const LangGraphAuthAnswerInvalid = {
  name: "LangGraphAuthAnswerInvalid",
  code: "CONFIG_INVALID",
  title: "A LangGraph auth handler answered a value that is neither a user, a filter nor a boolean.",
  message: (v: { handler: string; got: string }) => `The LangGraph auth handler "${v.handler}" answered ${v.got}`,
  hint: (v: { expected: string }) => `Return ${v.expected} from it.`,
} as const satisfies ErrorData;

/**
 * A store search or namespace listing under a LangGraph auth filter scanned as many records as
 * LangGraph's server does (10,000) without filling the page (HTTP 400, as LangGraph's server).
 */
export const LangGraphAuthStoreScanLimit = {
  name: "LangGraphAuthStoreScanLimit",
  code: "UNPROCESSABLE",
  title: "A filtered store query scanned too many items.",
  message: (v: { scanned: number }) =>
    `Authenticated store query exceeded maximum scan limit (${v.scanned} items scanned)`,
  hint: "Narrow the namespace or the filters.",
} as const satisfies ErrorData;

export const AUTH_ERRORS: readonly ErrorData[] = [
  Unauthorized,
  Forbidden,
  IdentityUnavailable,
  AuthDefaultProviderMissing,
  AuthProviderUnknown,
  AuthHookMissing,
  AuthCredentialsMissing,
  LangGraphAuthNotLoaded,
  LangGraphAuthNotAuth,
  LangGraphAuthRefused,
  LangGraphAuthAnswerInvalid,
  LangGraphAuthStoreScanLimit,
];
