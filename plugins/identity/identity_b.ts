/**
 * `identity_b`: per-user auth with provider-signed session JWTs, verified locally with `jose`.
 * Keys come from the provider's JWKS: `IDENTITY_B_JWKS_URL`, or `{IDENTITY_B_API_URL}/v1/jwks`
 * (default API `https://api.clerk.com`), fetched with `Authorization: Bearer <IDENTITY_B_SECRET_KEY>`
 * and refetched on an unknown key id at most every 30 s. `exp`/`nbf` are checked with 5 s of
 * clock skew; when `IDENTITY_B_AUTHORIZED_PARTIES` (comma-separated origins) is set the token's
 * `azp` must be one of them; when `IDENTITY_B_ISSUER` is set, `iss` must equal it. `sub` is the
 * identity. A key set that cannot be fetched (and is not cached) fails closed with 503.
 */
import { errors, type JWTPayload, jwtVerify } from "jose";
import {
  type AuthUser,
  bearerToken,
  browserModule,
  definePlugin,
  type Env,
  identityUnavailable,
  JwksKeyStore,
  missingBearer,
  sha256Hex,
  unauthorized,
} from "../../core/index.ts";
import { identityBBrowser } from "./identity_b.browser.ts";

const DEFAULT_API_URL = "https://api.clerk.com";
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];
const CLOCK_SKEW_SECONDS = 5;
const stores = new Map<string, JwksKeyStore>();

const DEFAULT_WIDGET_GLOBAL = "Clerk";

/**
 * The widget script for a publishable key: the key's payload is the base64 of the provider's
 * frontend host followed by `$`. `IDENTITY_B_JS_URL` overrides it.
 */
export function identityBScriptUrl(publishableKey: string, env: Env): string | null {
  const override = env.IDENTITY_B_JS_URL?.trim();
  if (override) return override;
  const m = /^pk_(?:test|live)_([A-Za-z0-9+/=_-]+)$/.exec(publishableKey.trim());
  if (!m) return null;
  let host: string;
  try {
    host = atob(m[1]!.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return null;
  }
  host = host.replace(/\$$/, "");
  if (!/^[a-z0-9.-]+(:\d+)?$/i.test(host)) return null;
  const lib = DEFAULT_WIDGET_GLOBAL.toLowerCase();
  return `https://${host}/npm/@${lib}/${lib}-js@5/dist/${lib}.browser.js`;
}

/** The JWKS address for an environment. */
export function jwksUrl(env: Env): string {
  const explicit = env.IDENTITY_B_JWKS_URL?.trim();
  if (explicit) return explicit;
  const api = (env.IDENTITY_B_API_URL?.trim() || DEFAULT_API_URL).replace(/\/+$/, "");
  return `${api}/v1/jwks`;
}

async function storeFor(env: Env): Promise<JwksKeyStore> {
  const secret = env.IDENTITY_B_SECRET_KEY?.trim();
  if (!secret) {
    throw identityUnavailable(
      "Cannot authenticate request: identity_b is not configured (IDENTITY_B_SECRET_KEY is not set)",
      "Set IDENTITY_B_SECRET_KEY in the project's .env or the deployment's secrets.",
    );
  }
  const url = jwksUrl(env);
  const key = `${url}\n${await sha256Hex(secret)}`;
  let store = stores.get(key);
  if (!store) {
    store = new JwksKeyStore({ url, headers: { authorization: `Bearer ${secret}` }, label: "identity_b" });
    stores.set(key, store);
  }
  return store;
}

function invalid(message: string): Error {
  return unauthorized(`Cannot authenticate request: ${message}`, { bearer: true, error: "invalid_token" });
}

async function verify(token: string, env: Env): Promise<AuthUser> {
  const store = await storeFor(env);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, store.getKey, {
      algorithms: ALGORITHMS,
      clockTolerance: CLOCK_SKEW_SECONDS,
      ...(env.IDENTITY_B_ISSUER?.trim() ? { issuer: env.IDENTITY_B_ISSUER.trim() } : {}),
    }));
  } catch (err) {
    if (err instanceof errors.JWTExpired) throw invalid("the session token has expired");
    if (err instanceof errors.JWTClaimValidationFailed) {
      throw invalid(`the session token's "${err.claim}" claim does not hold`);
    }
    if (err instanceof errors.JWKSNoMatchingKey) {
      throw invalid("the session token is signed by a key identity_b does not publish");
    }
    if (err instanceof errors.JWSSignatureVerificationFailed) {
      throw invalid("the session token's signature does not verify");
    }
    if (err instanceof errors.JOSEError) throw invalid("the session token is not a valid JWT");
    throw err;
  }
  const parties = (env.IDENTITY_B_AUTHORIZED_PARTIES ?? "").split(",").map((p) => p.trim().replace(/\/+$/, "")).filter(
    Boolean,
  );
  if (parties.length > 0) {
    const azp = typeof payload.azp === "string" ? payload.azp.replace(/\/+$/, "") : null;
    if (azp === null || !parties.includes(azp)) {
      throw invalid(
        `the session token was issued to ${
          azp === null ? "no authorized party" : `"${azp}"`
        }, which is not in IDENTITY_B_AUTHORIZED_PARTIES`,
      );
    }
  }
  if (typeof payload.sub !== "string" || payload.sub.trim() === "") {
    throw invalid('the session token has no "sub" claim');
  }
  const email = payload.email;
  const name = payload.name;
  return {
    identity: payload.sub,
    isAuthenticated: true,
    ...(typeof email === "string" && email ? { email } : {}),
    ...(typeof name === "string" && name ? { displayName: name } : {}),
    permissions: ["authenticated"],
  };
}

export default definePlugin({
  name: "identity_b",
  kind: "identity",
  description: "Per-user authentication: session tokens (JWT) verified against the provider's JWKS.",
  identity: {
    provider: "identity_b",
    env: ["IDENTITY_B_SECRET_KEY"],
    frontendEnv: ["IDENTITY_B_PUBLISHABLE_KEY"],
    signIn: "widget",
    perUser: true,
    posture:
      "per-user authentication with identity_b: requests carry 'Authorization: Bearer <session token>'; threads, runs, store and memory are private to each user",
    postDeploy: ({ url }) => [
      `identity_b: add "${url.host}" to the allowed domains of your identity_b application (once per deployment URL), ` +
      `so sign-in redirects and links return to the app. Development instances allow localhost automatically.`,
      `identity_b: if IDENTITY_B_AUTHORIZED_PARTIES is set, add "${url.origin}" to it.`,
    ],
    ui: {
      module: browserModule(identityBBrowser),
      settings: (env) => {
        const key = (env.IDENTITY_B_PUBLISHABLE_KEY ?? "").trim();
        return {
          publishable_key: key,
          script_url: identityBScriptUrl(key, env),
          widget_global: env.IDENTITY_B_WIDGET_GLOBAL?.trim() || DEFAULT_WIDGET_GLOBAL,
        };
      },
    },
  },
  hooks: {
    "auth:authenticate": async ({ request, env }) => {
      const token = bearerToken(request);
      if (token === null) throw missingBearer();
      return await verify(token, env);
    },
  },
});
