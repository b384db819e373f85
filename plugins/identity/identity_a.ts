/**
 * `identity_a`: per-user auth with a GoTrue-style identity server (session access tokens).
 * Each `Authorization: Bearer <token>` is checked with `GET {IDENTITY_A_URL}/auth/v1/user`
 * (headers `Authorization: Bearer <token>`, `apikey: <IDENTITY_A_PUBLISHABLE_DEFAULT_KEY>`);
 * the user's `id` is the identity. Positive answers are cached for 30 s (never past the
 * token's own `exp`), failures never. When the identity server is down or rejects our
 * publishable key the request fails closed with 503 (the token may well be valid, so a 401
 * would wrongly sign the user out of the UI); a token the server rejects is a 401.
 */
import { decodeJwt } from "jose";
import {
  type AuthUser,
  bearerToken,
  definePlugin,
  type Env,
  identityUnavailable,
  missingBearer,
  TokenCache,
  unauthorized,
} from "../../core/index.ts";
import { identityABrowserModule } from "./identity_a.browser.ts";

const cache = new TokenCache({ ttlMs: 30_000, maxEntries: 2000 });
const TIMEOUT_MS = 5_000;

function tokenExp(token: string): number | null {
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === "number" ? exp : null;
  } catch {
    return null;
  }
}

async function verify(token: string, env: Env): Promise<AuthUser> {
  const base = env.IDENTITY_A_URL?.trim().replace(/\/+$/, "");
  const apikey = env.IDENTITY_A_PUBLISHABLE_DEFAULT_KEY?.trim();
  if (!base || !apikey) {
    throw identityUnavailable(
      "Cannot authenticate request: identity_a is not configured (IDENTITY_A_URL or IDENTITY_A_PUBLISHABLE_DEFAULT_KEY is not set)",
      "Set IDENTITY_A_URL and IDENTITY_A_PUBLISHABLE_DEFAULT_KEY in the project's .env or the deployment's secrets.",
    );
  }
  const cached = await cache.get(token, base);
  if (cached) return cached;
  const exp = tokenExp(token);
  if (exp !== null && exp * 1000 + 5_000 <= Date.now()) {
    throw unauthorized("Cannot authenticate request: the session token has expired", {
      bearer: true,
      error: "invalid_token",
    });
  }
  const where = `${base}/auth/v1/user`;
  const hint =
    `Check that the identity server at ${base} is up and that IDENTITY_A_PUBLISHABLE_DEFAULT_KEY is its publishable key; requests are refused until it answers.`;
  let res: Response;
  try {
    res = await fetch(where, {
      headers: { authorization: `Bearer ${token}`, apikey, accept: "application/json" },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw identityUnavailable(
      `Cannot authenticate request: the identity_a server at ${base} is unreachable`,
      hint,
      err,
    );
  }
  const body = await res.json().catch(() => null) as Record<string, unknown> | null;
  if (res.status === 401 || res.status === 403 || res.status === 400 || res.status === 404 || res.status === 422) {
    const said = String(body?.message ?? body?.msg ?? body?.error ?? "");
    if (/api ?key/i.test(said)) {
      throw identityUnavailable(
        `Cannot authenticate request: the identity_a server at ${base} rejects IDENTITY_A_PUBLISHABLE_DEFAULT_KEY`,
        hint,
      );
    }
    throw unauthorized("Cannot authenticate request: the session token is invalid or expired", {
      bearer: true,
      error: "invalid_token",
    });
  }
  if (!res.ok || !body) {
    throw identityUnavailable(
      `Cannot authenticate request: the identity_a server at ${base} answered HTTP ${res.status}`,
      hint,
    );
  }
  const id = body.id;
  if (typeof id !== "string" || id.trim() === "") {
    throw unauthorized("Cannot authenticate request: the identity server returned no user id for this token", {
      bearer: true,
      error: "invalid_token",
    });
  }
  const meta = (body.user_metadata ?? {}) as Record<string, unknown>;
  const name = meta.full_name ?? meta.name;
  const user: AuthUser = {
    identity: id,
    isAuthenticated: true,
    ...(typeof body.email === "string" && body.email ? { email: body.email } : {}),
    ...(typeof name === "string" && name ? { displayName: name } : {}),
    permissions: ["authenticated"],
  };
  await cache.set(token, user, { scope: base, expSeconds: exp });
  return user;
}

export default definePlugin({
  name: "identity_a",
  kind: "identity",
  description: "Per-user authentication: session access tokens verified by the identity server at IDENTITY_A_URL.",
  identity: {
    provider: "identity_a",
    env: ["IDENTITY_A_URL", "IDENTITY_A_PUBLISHABLE_DEFAULT_KEY"],
    frontendEnv: [],
    signIn: "email-password",
    perUser: true,
    posture:
      "per-user authentication with identity_a: requests carry 'Authorization: Bearer <session access token>'; threads, runs, store and memory are private to each user",
    postDeploy: ({ url }) => [
      `identity_a: add the redirect URL pattern "${url.origin}/app/**" to the allowed redirect URLs of your identity_a project ` +
      `(once per deployment URL), so sign-in redirects, password-reset and email-confirmation links return to the app.`,
    ],
    ui: {
      module: identityABrowserModule(),
      settings: (env) => ({
        url: (env.IDENTITY_A_URL ?? "").trim(),
        publishable_key: (env.IDENTITY_A_PUBLISHABLE_DEFAULT_KEY ?? "").trim(),
      }),
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
