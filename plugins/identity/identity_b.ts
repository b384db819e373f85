/** `identity_b`: per-user auth with provider-signed session JWTs, verified locally against JWKS. */
import { definePlugin } from "../../core/hooks.ts";

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
    posture: "per-user authentication with identity_b: requests carry 'Authorization: Bearer <session token>'; threads, runs, store and memory are private to each user",
  },
});
